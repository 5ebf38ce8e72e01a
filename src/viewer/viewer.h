/* The interactive viewer (SDL2): `difgames view` and `difgames play`. It lives outside the
 * library (which stays free of SDL) and is linked into the command only. */
#ifndef DG_VIEWER_H
#define DG_VIEWER_H

int cmd_view(int argc, char **argv);
int cmd_play(int argc, char **argv);
int cmd_hji_view(int argc, char **argv);  /* difgames hji view */

#endif
