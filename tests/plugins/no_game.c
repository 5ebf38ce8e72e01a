/* A shared object that exports no game (no difgames_game): difgames refuses it (hostile_input_test.sh). */
int dg_test_not_a_game(int x);
int dg_test_not_a_game(int x) { return x + 1; }
