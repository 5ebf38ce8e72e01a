/* A game's model file: names, expressions and their symbolic derivatives (libmatheval). */
#include "model/model.h"

#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <matheval.h>

/* ------------------------------------------------------------------ names */

static int name_ok(const char *s) {
    if (!s || !(isalpha((unsigned char)s[0]) || s[0] == '_') || strlen(s) >= 24) return 0;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_')) return 0;
    /* libmatheval's own constants and functions cannot be redefined: the name must parse as one variable */
    void *f = evaluator_create((char *)s);
    if (!f) return 0;
    char **names;
    int n = 0;
    evaluator_get_variables(f, &names, &n);
    const int ok = n == 1 && strcmp(names[0], s) == 0;
    evaluator_destroy(f);
    return ok;
}

/* 1 when s is a letter, then letters, digits, _ and the characters of extra, shorter than cap: a
 * name outputs print (a game's, a body's), no expression's */
static int name_plain(const char *s, size_t cap, const char *extra) {
    if (!s || !isalpha((unsigned char)s[0]) || strlen(s) >= cap) return 0;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_' || strchr(extra, *p))) return 0;
    return 1;
}

static int find_name(const dg_model *m, const char *s) {
    for (int i = 0; i < m->nnames; i++)
        if (strcmp(m->name[i], s) == 0) return i;
    return -1;
}

static dg_status add_name(dg_model *m, dg_cfg *c, const char *path, const char *s, int kind, dg_err *e) {
    if (!name_ok(s))
        return dg_cfg_error(c, path, e, "'%s' is not a usable name (letters, digits and _, at most 23, not a "
                            "function or constant of expressions such as e or pi)", s);
    if (find_name(m, s) >= 0) return dg_cfg_error(c, path, e, "the name '%s' is declared twice", s);
    if (m->nnames >= DG_MODEL_MAX_NAMES)
        return dg_cfg_error(c, path, e, "more than %d names in the model", DG_MODEL_MAX_NAMES);
    snprintf(m->name[m->nnames], sizeof m->name[0], "%s", s);
    m->kind[m->nnames++] = kind;
    return DG_OK;
}

/* ------------------------------------------------------------ expressions */

/* kinds a context may read, as a bit mask of 1 << dg_model_kind */
#define READ_ALL ((1u << DG_MV_STATE) | (1u << DG_MV_AUX) | (1u << DG_MV_INPUT) | (1u << DG_MV_CONST) | (1u << DG_MV_DT))
#define READ_NOINPUT (READ_ALL & ~(1u << DG_MV_INPUT))

static void expr_free(dg_model_expr *x) {
    for (int k = 0; k < x->nv; k++)
        if (x->d[k]) evaluator_destroy(x->d[k]);
    if (x->f) evaluator_destroy(x->f);
    memset(x, 0, sizeof *x);
}

/* Parses text (the value of key path) into x. The text is checked character by character before
 * libmatheval sees it: names, numbers, + - * / ^, parentheses and blanks only, so C syntax, comments,
 * strings, preprocessor lines and calls with several arguments never reach a parser. */
static dg_status expr_parse(dg_model *m, dg_cfg *c, const char *path, const char *text, unsigned allowed,
                            dg_model_expr *x, dg_err *e) {
    memset(x, 0, sizeof *x);
    snprintf(x->key, sizeof x->key, "%s", path);
    const size_t len = strlen(text);
    if (len == 0) return dg_cfg_error(c, path, e, "empty expression");
    if (len > DG_MODEL_MAX_EXPR_CHARS)
        return dg_cfg_error(c, path, e, "expression longer than %d characters", DG_MODEL_MAX_EXPR_CHARS);
    for (size_t i = 0; i < len; i++) {
        const unsigned char ch = (unsigned char)text[i];
        if (isalnum(ch) || strchr("_.+-*/^() \t", ch)) continue;
        if (ch == ',')
            return dg_cfg_error(c, path, e, "',' at column %zu: functions of expressions take one argument", i + 1);
        if (isprint(ch))
            return dg_cfg_error(c, path, e, "character '%c' at column %zu is not allowed in an expression (names, "
                                "numbers, + - * / ^ and parentheses only)", ch, i + 1);
        return dg_cfg_error(c, path, e, "byte 0x%02x at column %zu is not allowed in an expression", ch, i + 1);
    }
    x->f = evaluator_create((char *)text);
    if (!x->f)
        return dg_cfg_error(c, path, e, "cannot parse '%s': a syntax error or a function outside the allowed "
                            "set (exp log sqrt sin cos tan asin acos atan sinh cosh tanh abs step ...)", text);
    int n = 0;
    evaluator_get_variables(x->f, &x->names, &n);
    if (n > DG_MODEL_MAX_NAMES) n = DG_MODEL_MAX_NAMES;
    for (int k = 0; k < n; k++) {
        const int i = find_name(m, x->names[k]);
        if (i < 0) {
            char known[512] = "";
            for (int j = 0; j < m->nnames; j++)
                if (allowed & (1u << m->kind[j]))
                    snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", known[0] ? ", " : "",
                             m->name[j]);
            dg_status st = dg_cfg_error(c, path, e, "unknown name '%s' in '%s' (known here: %s)", x->names[k], text,
                                        known);
            expr_free(x);
            return st;
        }
        if (!(allowed & (1u << m->kind[i]))) {
            dg_status st = dg_cfg_error(c, path, e, "'%s' cannot be read here (%s)", x->names[k],
                                        m->kind[i] == DG_MV_INPUT ? "an input: it is not known yet" : "not allowed");
            expr_free(x);
            return st;
        }
        x->var[k] = i;
    }
    x->nv = n;
    x->direct = -1;
    if (n == 1 && strcmp(evaluator_get_string(x->f), x->names[0]) == 0) x->direct = x->var[0];
    double cv[DG_MODEL_MAX_NAMES];
    dg_model_values(m, cv);
    for (int k = 0; k < n; k++) {
        const int kind = m->kind[x->var[k]];
        if (kind == DG_MV_CONST || kind == DG_MV_DT) continue;
        if (!(x->d[k] = evaluator_derivative(x->f, x->names[k]))) {
            dg_status st = dg_err_set(e, DG_ERR_NOMEM, "%s: out of memory differentiating '%s'", path, text);
            expr_free(x);
            return st;
        }
        /* a derivative that reads only constants is one number, computed once */
        char **dn;
        int dnv = 0, varies = 0;
        evaluator_get_variables(x->d[k], &dn, &dnv);
        for (int j = 0; j < dnv; j++) {
            const int i = find_name(m, dn[j]);
            varies |= i < 0 || (m->kind[i] != DG_MV_CONST && m->kind[i] != DG_MV_DT);
        }
        x->dkind[k] = 2;
        if (!varies) {
            x->dval[k] = dg_model_eval_d(x, k, cv);
            x->dkind[k] = x->dval[k] == 0.0 ? 0 : 1;
        }
    }
    return DG_OK;
}

static dg_status expr_read(dg_model *m, dg_cfg *c, const char *path, unsigned allowed, dg_model_expr *x,
                           dg_err *e) {
    const char *text = NULL;
    dg_status st = dg_cfg_require(c, path, e);
    if (!st) st = dg_cfg_get(c, path, DG_CFG_STR, &text, e);
    if (st) return st;
    return expr_parse(m, c, path, text, allowed, x, e);
}

void dg_model_lock(const dg_model *m) {
    if (m->interpreted) pthread_mutex_lock((pthread_mutex_t *)&m->lock);
}
void dg_model_unlock(const dg_model *m) {
    if (m->interpreted) pthread_mutex_unlock((pthread_mutex_t *)&m->lock);
}

double dg_model_eval(const dg_model_expr *x, const double *v) {
    if (x->direct >= 0) return v[x->direct];
    if (x->fn) return x->fn(v);
    double vals[DG_MODEL_MAX_NAMES];
    for (int k = 0; k < x->nv; k++) vals[k] = v[x->var[k]];
    return evaluator_evaluate(x->f, x->nv, x->names, vals);
}

double dg_model_eval_d(const dg_model_expr *x, int k, const double *v) {
    if (!x->d[k] || x->dkind[k] == 0) return 0.0;
    if (x->dkind[k] == 1) return x->dval[k];
    if (x->dfn[k]) return x->dfn[k](v);
    double vals[DG_MODEL_MAX_NAMES];
    for (int j = 0; j < x->nv; j++) vals[j] = v[x->var[j]];
    return evaluator_evaluate(x->d[k], x->nv, x->names, vals);
}

void dg_model_values(const dg_model *m, double *v) {
    for (int i = 0; i < m->nnames; i++)
        v[i] = (m->kind[i] == DG_MV_CONST || m->kind[i] == DG_MV_DT) ? m->cval[i] : 0.0;
}

int dg_model_draw(const dg_model *m, dg_rng *rng, double *v) {
    for (int g = 0; g < m->nreset; g++) {
        const dg_model_reset *r = &m->reset[g];
        int t = 0;
        for (; t < 1000000; t++) {
            for (int k = 0; k < r->n; k++)
                v[r->var[k]] = r->lo[k] == r->hi[k] ? r->lo[k]
                             : (double)dg_rng_uniform(rng, (float)r->lo[k], (float)r->hi[k]);
            if (!r->has_where || dg_model_eval(&r->where, v) >= 0.0) break;
        }
        if (t == 1000000) return 0;
    }
    return 1;
}

/* -------------------------------------------------------------- sections */

static dg_status read_span(dg_cfg *c, const char *path, double *lo, double *hi, dg_err *e) {
    double span[2];
    int n = 0;
    if (dg_cfg_len(c, path) < 0) {               /* a number: a fixed value */
        dg_status st = dg_cfg_get(c, path, DG_CFG_F64, lo, e);
        *hi = *lo;
        return st;
    }
    dg_status st = dg_cfg_get_list(c, path, DG_CFG_F64, 0, span, 2, 2, &n, e);
    if (st) return st;
    if (!(span[0] <= span[1])) return dg_cfg_error(c, path, e, "need lo <= hi, got [%g, %g]", span[0], span[1]);
    *lo = span[0];
    *hi = span[1];
    return DG_OK;
}

/* An input no learned player controls: how both solvers treat it (play: hold, or adversarial: what
 * certify lets maximise the loss), and the value BPTT holds it at (hold: a number or dim numbers,
 * default the box centre); a learned input takes neither (its player's action is its value). */
static dg_status read_play(dg_cfg *c, const char *path, dg_model_input *in, dg_err *e) {
    static const char *const PLAY[] = {"hold", "adversarial", NULL};
    char sub[200], hsub[200];
    const char *play = NULL;
    dg_status st;
    snprintf(sub, sizeof sub, "%s.play", path);
    snprintf(hsub, sizeof hsub, "%s.hold", path);
    for (int j = 0; j < in->dim; j++) in->hold[j] = 0.5 * (in->lo[j] + in->hi[j]);  /* as BPTT always did */
    in->play = DG_MODEL_PLAY_UNDECLARED;
    if (in->learned) {
        const char *bad = dg_cfg_has(c, sub) ? sub : dg_cfg_has(c, hsub) ? hsub : NULL;
        return bad ? dg_cfg_error(c, bad, e, "a learned input plays its player's action: play and hold are for an "
                                  "input no one learns") : DG_OK;
    }
    if ((st = dg_cfg_get(c, sub, DG_CFG_STR, &play, e))) return st;
    if (play) {
        int k = 0;
        while (PLAY[k] && strcmp(PLAY[k], play)) k++;
        if (!PLAY[k]) return dg_cfg_error(c, sub, e, "'%s' is not hold or adversarial", play);
        in->play = k == 0 ? DG_MODEL_PLAY_HOLD : DG_MODEL_PLAY_ADVERSARIAL;
        if (in->play == DG_MODEL_PLAY_ADVERSARIAL && !in->role_max)
            return dg_cfg_error(c, sub, e, "an adversarial input maximises the loss: give it role: max");
        if (in->play == DG_MODEL_PLAY_ADVERSARIAL && in->ball)
            return dg_cfg_error(c, sub, e, "an adversarial input is searched over its box: set: box");
    }
    if (!dg_cfg_has(c, hsub)) return DG_OK;
    if (dg_cfg_len(c, hsub) < 0) {
        if ((st = dg_cfg_get(c, hsub, DG_CFG_F64, &in->hold[0], e))) return st;
        for (int j = 1; j < in->dim; j++) in->hold[j] = in->hold[0];
    } else if ((st = dg_cfg_get_list(c, hsub, DG_CFG_F64, 0, in->hold, in->dim, in->dim, NULL, e)))
        return st;
    double r2 = 0;
    for (int j = 0; j < in->dim; j++) {
        const double x = in->hold[j];
        r2 += x * x;
        if (!isfinite(x) || (!in->ball && (x < in->lo[j] || x > in->hi[j])))
            return dg_cfg_error(c, hsub, e, "component %d: %g lies outside the input's box", j + 1, x);
    }
    if (in->ball && r2 > in->radius * in->radius)
        return dg_cfg_error(c, hsub, e, "lies outside the input's ball of radius %g", in->radius);
    return DG_OK;
}

/* Whether model.players names input nm as a player's (model.players.<player>.input: nm). */
static int player_owns(dg_cfg *c, const char *nm) {
    const int np = dg_cfg_len(c, "model.players");
    for (int q = 0; q < np; q++) {
        const char *pn = dg_cfg_key(c, "model.players", q), *in = NULL;
        char sub[160];
        if (!pn) continue;
        snprintf(sub, sizeof sub, "model.players.%s.input", pn);
        if (dg_cfg_get(c, sub, DG_CFG_STR, &in, NULL) == DG_OK && in && !strcmp(in, nm)) return 1;
    }
    return 0;
}

static dg_status read_inputs(dg_model *m, dg_cfg *c, dg_err *e) {
    const int n = dg_cfg_len(c, "model.inputs"), gs = dg_cfg_has(c, "model.players");
    if (n < 1 || n > (gs ? DG_MODEL_MAX_PLAYERS : 2))
        return dg_cfg_error(c, "model.inputs", e, gs ? "declare 1 to %d inputs (a map)" : "declare one or two players' "
                            "inputs (a map)", DG_MODEL_MAX_PLAYERS);
    m->ninputs = n;
    for (int p = 0; p < n; p++) {
        dg_model_input *in = &m->in[p];
        const char *nm = dg_cfg_key(c, "model.inputs", p);
        char path[160], sub[200];
        if (!nm) return dg_cfg_error(c, "model.inputs", e, "must be a map of player names");
        snprintf(path, sizeof path, "model.inputs.%s", nm);
        snprintf(in->name, sizeof in->name, "%s", nm);
        in->dim = 1;
        in->learned = gs ? player_owns(c, nm) : p == 0;  /* general-sum: the players' inputs are learned */
        const char *role = "min";
        dg_status st;
        snprintf(sub, sizeof sub, "%s.dim", path);
        if ((st = dg_cfg_get(c, sub, DG_CFG_INT, &in->dim, e))) return st;
        if (in->dim < 1 || in->dim > DG_MODEL_MAX_INPUT)
            return dg_cfg_error(c, sub, e, "dim must be 1 to %d", DG_MODEL_MAX_INPUT);
        snprintf(sub, sizeof sub, "%s.learned", path);
        if ((st = dg_cfg_get(c, sub, DG_CFG_BOOL, &in->learned, e))) return st;
        snprintf(sub, sizeof sub, "%s.role", path);
        if ((st = dg_cfg_get(c, sub, DG_CFG_STR, &role, e))) return st;
        if (strcmp(role, "min") && strcmp(role, "max")) return dg_cfg_error(c, sub, e, "role is min or max");
        in->role_max = role[1] == 'a';
        const char *set = "box";
        snprintf(sub, sizeof sub, "%s.set", path);
        if ((st = dg_cfg_get(c, sub, DG_CFG_STR, &set, e))) return st;
        if (strcmp(set, "box") && strcmp(set, "ball")) return dg_cfg_error(c, sub, e, "set is box or ball");
        if ((in->ball = set[1] == 'a')) {
            in->radius = 1.0;
            snprintf(sub, sizeof sub, "%s.radius", path);
            if ((st = dg_cfg_get(c, sub, DG_CFG_F64, &in->radius, e))) return st;
            if (!(in->radius >= 0)) return dg_cfg_error(c, sub, e, "radius must be >= 0");
        }
        for (int k = 0; k < 2; k++) {
            double *b = k ? in->hi : in->lo;
            snprintf(sub, sizeof sub, "%s.%s", path, k ? "hi" : "lo");
            for (int j = 0; j < in->dim; j++) b[j] = k ? 1.0 : -1.0;
            if (dg_cfg_len(c, sub) < 0 && dg_cfg_has(c, sub)) {
                if ((st = dg_cfg_get(c, sub, DG_CFG_F64, &b[0], e))) return st;
                for (int j = 1; j < in->dim; j++) b[j] = b[0];
            } else if ((st = dg_cfg_get_list(c, sub, DG_CFG_F64, 0, b, in->dim, in->dim, NULL, e)))
                return st;
        }
        for (int j = 0; j < in->dim; j++)
            if (!(in->lo[j] <= in->hi[j])) {
                snprintf(sub, sizeof sub, "%s.lo", path);
                return dg_cfg_error(c, sub, e, "component %d: lo > hi", j + 1);
            }
        if ((st = read_play(c, path, in, e))) return st;
        in->first = m->nnames;
        for (int j = 0; j < in->dim; j++) {
            char cn[40];
            if (in->dim == 1) snprintf(cn, sizeof cn, "%s", nm);
            else snprintf(cn, sizeof cn, "%s%d", nm, j + 1);
            if ((st = add_name(m, c, path, cn, DG_MV_INPUT, e))) return st;
        }
        m->nin_total += in->dim;
    }
    if (!gs && n == 2 && m->in[0].role_max == m->in[1].role_max)
        return dg_cfg_error(c, "model.inputs", e, "two players need opposite roles (min and max)");
    return DG_OK;
}

static dg_status read_reset(dg_model *m, dg_cfg *c, dg_err *e) {
    if (!dg_cfg_has(c, "model.reset")) return DG_OK;  /* the grid solver needs none */
    const int n = dg_cfg_len(c, "model.reset");
    if (n < 1 || n > DG_MODEL_MAX_RESET)
        return dg_cfg_error(c, "model.reset", e, "a list of 1 to %d groups {name: [lo, hi] or value, ..., "
                            "where: expression}", DG_MODEL_MAX_RESET);
    int set[DG_MODEL_MAX_NAMES] = {0};
    m->nreset = n;
    for (int g = 0; g < n; g++) {
        dg_model_reset *r = &m->reset[g];
        char path[64], sub[160];
        snprintf(path, sizeof path, "model.reset[%d]", g);
        const int nk = dg_cfg_len(c, path);
        for (int k = 0; k < nk; k++) {
            const char *nm = dg_cfg_key(c, path, k);
            if (!nm) return dg_cfg_error(c, path, e, "a reset group is a map");
            snprintf(sub, sizeof sub, "%s.%s", path, nm);
            dg_status st;
            if (!strcmp(nm, "where")) {
                /* reads the group's own draws and those before it */
                if ((st = expr_read(m, c, sub, READ_NOINPUT, &r->where, e))) return st;
                for (int j = 0; j < r->where.nv; j++) {
                    const int v = r->where.var[j];
                    if ((m->kind[v] == DG_MV_STATE || m->kind[v] == DG_MV_AUX) && !set[v])
                        return dg_cfg_error(c, sub, e, "'%s' is not drawn yet", m->name[v]);
                }
                r->has_where = 1;
                continue;
            }
            const int v = find_name(m, nm);
            if (v < 0 || (m->kind[v] != DG_MV_STATE && m->kind[v] != DG_MV_AUX))
                return dg_cfg_error(c, sub, e, "'%s' is not a state or episode variable", nm);
            if (set[v]) return dg_cfg_error(c, sub, e, "'%s' is drawn twice", nm);
            if ((st = read_span(c, sub, &r->lo[r->n], &r->hi[r->n], e))) return st;
            r->var[r->n++] = v;
            set[v] = 1;
        }
    }
    for (int v = 0; v < m->nnames; v++)
        if ((m->kind[v] == DG_MV_STATE || m->kind[v] == DG_MV_AUX) && !set[v])
            return dg_cfg_error(c, "model.reset", e, "'%s' has no initial value", m->name[v]);
    return DG_OK;
}

static dg_status read_exprs(dg_model *m, dg_cfg *c, const char *path, unsigned allowed, int max, int *n,
                            dg_model_expr *out, dg_err *e) {
    *n = dg_cfg_len(c, path);
    if (*n < 0 && !dg_cfg_has(c, path)) {
        *n = 0;  /* absent: what needs it says so */
        return DG_OK;
    }
    if (*n < 1 || *n > max) return dg_cfg_error(c, path, e, "a list of 1 to %d expressions", max);
    for (int k = 0; k < *n; k++) {
        char sub[96];
        snprintf(sub, sizeof sub, "%s[%d]", path, k);
        dg_status st = expr_read(m, c, sub, allowed, &out[k], e);
        if (st) return st;
    }
    return DG_OK;
}

/* draw.bodies: a list of [x, y] (unnamed), or a map name: [x, y] whose names play's --as takes (the
 * first body is the learned min player's, the second the max player's, as in built-in games) */
static dg_status read_bodies(dg_model *m, dg_cfg *c, dg_err *e) {
    const char *path = "model.draw.bodies";
    m->nbodies = dg_cfg_has(c, path) ? dg_cfg_len(c, path) : 0;
    if (m->nbodies < 0 || m->nbodies > 4)
        return dg_cfg_error(c, path, e, "at most 4 bodies: a list [[x, y], ...] or a map name: [x, y]");
    const int named = m->nbodies > 0 && dg_cfg_key(c, path, 0) != NULL;
    for (int b = 0; b < m->nbodies; b++) {
        char at[96], sub[160];
        const char *nm = named ? dg_cfg_key(c, path, b) : NULL;
        if (named) {
            snprintf(at, sizeof at, "%s.%s", path, nm);
            if (!name_plain(nm, 24, ""))
                return dg_cfg_error(c, at, e, "a body's name is letters, digits and _ (at most 23), not '%s'", nm);
            if (!strcmp(nm, "goal")) return dg_cfg_error(c, at, e, "'goal' names draw.goal: call the body otherwise");
            const size_t used = strlen(m->body_names);
            snprintf(m->body_names + used, sizeof m->body_names - used, "%s%s", b ? "," : "", nm);
        } else {
            snprintf(at, sizeof at, "%s[%d]", path, b);
        }
        for (int k = 0; k < 2; k++) {
            snprintf(sub, sizeof sub, "%s[%d]", at, k);
            dg_status st = expr_read(m, c, sub, READ_NOINPUT, &m->body[b][k], e);
            if (st) return st;
        }
    }
    return DG_OK;
}

/* the section's keys of one value (model_keys: what they are read into) */
typedef struct model_keys {
    const char *name;
    int compile;
} model_keys;
const dg_key dg_model_key_table[DG_MODEL_NKEYS] = {
    {.name = "model.name", .type = DG_KEY_STR, .offset = offsetof(model_keys, name), .def_str = "model",
     .doc = "the game's name in every output (JSON game, with source: model; loss.png, replays, the viewer, hji "
            "value files): letters, digits, _ and -, at most 31"},
    DG_K_BOOL("model.compile", model_keys, compile, 1, "compile the expressions with the system's C++ compiler "
              "(docs/models.md); false: libmatheval interprets them (same values, slower)"),
};

/* model.constants (and dt), model.state with its box, model.episode (its variables, and the values
 * they keep on the grid solver's grid) as names of m. */
static dg_status read_variables(dg_model *m, dg_cfg *c, double dt, dg_err *e) {
    dg_status st;
    char sub[160];
    const int nc = dg_cfg_has(c, "model.constants") ? dg_cfg_len(c, "model.constants") : 0;
    for (int k = 0; k < nc; k++) {
        const char *nm = dg_cfg_key(c, "model.constants", k);
        if (!nm) return dg_cfg_error(c, "model.constants", e, "a map name: number");
        snprintf(sub, sizeof sub, "model.constants.%s", nm);
        if ((st = add_name(m, c, sub, nm, DG_MV_CONST, e))) return st;
        if ((st = dg_cfg_get(c, sub, DG_CFG_F64, &m->cval[m->nnames - 1], e))) return st;
    }
    if ((st = add_name(m, c, "model", "dt", DG_MV_DT, e))) return st;
    m->cval[m->nnames - 1] = dt;
    /* state with its box */
    m->ns = dg_cfg_len(c, "model.state");
    if (m->ns < 1 || m->ns > DG_MODEL_MAX_STATE)
        return dg_cfg_error(c, "model.state", e, "a map of 1 to %d variables name: [lo, hi]", DG_MODEL_MAX_STATE);
    m->s0 = m->nnames;
    for (int k = 0; k < m->ns; k++) {
        const char *nm = dg_cfg_key(c, "model.state", k);
        if (!nm) return dg_cfg_error(c, "model.state", e, "a map of variables name: [lo, hi]");
        snprintf(sub, sizeof sub, "model.state.%s", nm);
        if ((st = add_name(m, c, sub, nm, DG_MV_STATE, e)) || (st = read_span(c, sub, &m->box_lo[k], &m->box_hi[k], e)))
            return st;
        if (!(m->box_lo[k] < m->box_hi[k])) return dg_cfg_error(c, sub, e, "the box needs lo < hi");
    }
    /* episode constants (aux) */
    if (dg_cfg_has(c, "model.episode")) {
        const char *an = "aux";
        if ((st = dg_cfg_get(c, "model.episode.name", DG_CFG_STR, &an, e))) return st;
        snprintf(m->aux_name, sizeof m->aux_name, "%s", an);
        m->a0 = m->nnames;
        m->naux = dg_cfg_len(c, "model.episode.vars");
        if (m->naux < 1 || m->naux > DG_MODEL_MAX_STATE)
            return dg_cfg_error(c, "model.episode.vars", e, "a list of 1 to %d names", DG_MODEL_MAX_STATE);
        for (int k = 0; k < m->naux; k++) {
            const char *nm = NULL;
            snprintf(sub, sizeof sub, "model.episode.vars[%d]", k);
            if ((st = dg_cfg_get(c, sub, DG_CFG_STR, &nm, e)) || (st = add_name(m, c, sub, nm, DG_MV_AUX, e))) return st;
        }
        /* the grid solver's: the values the episode variables keep on its grid (0 when not given) */
        const int ng = dg_cfg_has(c, "model.episode.grid") ? dg_cfg_len(c, "model.episode.grid") : 0;
        m->has_aux_grid = ng > 0;
        if (ng < 0) return dg_cfg_error(c, "model.episode.grid", e, "a map name: value of episode variables");
        for (int k = 0; k < ng; k++) {
            const char *nm = dg_cfg_key(c, "model.episode.grid", k);
            snprintf(sub, sizeof sub, "model.episode.grid.%s", nm ? nm : "?");
            const int v = nm ? find_name(m, nm) : -1;
            if (v < 0 || m->kind[v] != DG_MV_AUX) return dg_cfg_error(c, sub, e, "'%s' is not an episode variable", nm);
            if ((st = dg_cfg_get(c, sub, DG_CFG_F64, &m->aux_grid[v - m->a0], e))) return st;
        }
    }
    return DG_OK;
}

/* model.dynamics: a derivative of each state variable, in update order. */
static dg_status read_dynamics(dg_model *m, dg_cfg *c, dg_err *e) {
    dg_status st;
    char sub[160];
    m->ndyn = dg_cfg_len(c, "model.dynamics");
    if (m->ndyn != m->ns)
        return dg_cfg_error(c, "model.dynamics", e, "a map with one derivative for each of the %d state variables",
                            m->ns);
    for (int k = 0; k < m->ndyn; k++) {
        const char *nm = dg_cfg_key(c, "model.dynamics", k);
        snprintf(sub, sizeof sub, "model.dynamics.%s", nm ? nm : "?");
        const int v = nm ? find_name(m, nm) : -1;
        if (v < 0 || m->kind[v] != DG_MV_STATE) return dg_cfg_error(c, sub, e, "'%s' is not a state variable", nm);
        for (int j = 0; j < k; j++)
            if (m->dyn_var[j] == v) return dg_cfg_error(c, sub, e, "'%s' has two derivatives", nm);
        m->dyn_var[k] = v;
        if ((st = expr_read(m, c, sub, READ_ALL, &m->dyn[k], e))) return st;
    }
    return DG_OK;
}

/* model.diffusion (optional): a noise for some state variables, dx_i = f_i dt + sigma_i dW_i, each
 * sigma_i an expression of the state, episode, inputs and constants, each dW_i independent. */
static dg_status read_diffusion(dg_model *m, dg_cfg *c, dg_err *e) {
    dg_status st;
    char sub[160];
    if (!dg_cfg_has(c, "model.diffusion")) return DG_OK;
    m->ndiff = dg_cfg_len(c, "model.diffusion");
    if (m->ndiff < 1 || m->ndiff > m->ns)
        return dg_cfg_error(c, "model.diffusion", e, "a map state: sigma, at most one for each of the %d state "
                            "variables", m->ns);
    for (int k = 0; k < m->ndiff; k++) {
        const char *nm = dg_cfg_key(c, "model.diffusion", k);
        snprintf(sub, sizeof sub, "model.diffusion.%s", nm ? nm : "?");
        const int v = nm ? find_name(m, nm) : -1;
        if (v < 0 || m->kind[v] != DG_MV_STATE) return dg_cfg_error(c, sub, e, "'%s' is not a state variable", nm);
        for (int j = 0; j < k; j++)
            if (m->diff_var[j] == v) return dg_cfg_error(c, sub, e, "'%s' has two diffusions", nm);
        m->diff_var[k] = v;
        if ((st = expr_read(m, c, sub, READ_ALL, &m->diff[k], e))) return st;
    }
    return DG_OK;
}

/* model.costs: the loss terms, weighted by loss.<name>: running ones (per step, may read the inputs),
 * then those of costs.terminal (once, on the final state). */
static dg_status read_costs(dg_model *m, dg_cfg *c, dg_err *e) {
    dg_status st;
    char sub[160];
    const int nkeys = dg_cfg_has(c, "model.costs") ? dg_cfg_len(c, "model.costs") : 0;
    if (nkeys < 0) return dg_cfg_error(c, "model.costs", e, "a map of costs name: expression (and terminal: a map)");
    const int has_term = dg_cfg_has(c, "model.costs.terminal");
    const int nterm = has_term ? dg_cfg_len(c, "model.costs.terminal") : 0;
    if (has_term && nterm < 1)
        return dg_cfg_error(c, "model.costs.terminal", e, "a map of terminal costs name: expression of the final state");
    if (nkeys - has_term + nterm > DG_MODEL_MAX_TERMS)
        return dg_cfg_error(c, "model.costs", e, "%d costs (running and terminal): at most %d",
                            nkeys - has_term + nterm, DG_MODEL_MAX_TERMS);
    for (int pass = 0; pass < 2; pass++) {
        const char *sec = pass ? "model.costs.terminal" : "model.costs";
        for (int i = 0; i < (pass ? nterm : nkeys); i++) {
            const char *nm = dg_cfg_key(c, sec, i);
            if (!pass && nm && !strcmp(nm, "terminal")) continue;
            snprintf(sub, sizeof sub, "%s.%s", sec, nm ? nm : "?");
            if (!nm || !name_ok(nm)) return dg_cfg_error(c, sub, e, "a cost's name is a plain name");
            const int k = m->ncost;
            snprintf(m->cost_key[k], sizeof m->cost_key[k], "loss.%s", nm);
            for (int j = 0; j < k; j++)
                if (!strcmp(m->cost_key[j], m->cost_key[k]))
                    return dg_cfg_error(c, sub, e, "the cost '%s' is declared twice", nm);
            if ((st = expr_read(m, c, sub, pass ? READ_NOINPUT : READ_ALL, &m->cost[k], e))) return st;
            m->ncost++;
        }
        if (!pass) m->nrun = m->ncost;
    }
    return DG_OK;
}

/* model.metrics: at the final state (means over the batch). */
static dg_status read_metrics(dg_model *m, dg_cfg *c, dg_err *e) {
    dg_status st;
    char sub[160];
    m->nmetric = dg_cfg_has(c, "model.metrics") ? dg_cfg_len(c, "model.metrics") : 0;
    if (m->nmetric < 0 || m->nmetric > 4) return dg_cfg_error(c, "model.metrics", e, "a map of at most 4 metrics");
    for (int k = 0; k < m->nmetric; k++) {
        const char *nm = dg_cfg_key(c, "model.metrics", k);
        snprintf(sub, sizeof sub, "model.metrics.%s", nm ? nm : "?");
        if (!nm || !name_ok(nm)) return dg_cfg_error(c, sub, e, "a metric's name is a plain name");
        snprintf(m->metric_name[k], sizeof m->metric_name[k], "%s", nm);
        if ((st = expr_read(m, c, sub, READ_NOINPUT, &m->metric[k], e))) return st;
    }
    return DG_OK;
}

/* model.draw: the bodies, the goal and circles. */
static dg_status read_draw(dg_model *m, dg_cfg *c, dg_err *e) {
    dg_status st;
    char sub[160];
    if ((st = read_bodies(m, c, e))) return st;
    if ((m->has_goal = dg_cfg_has(c, "model.draw.goal")))
        for (int k = 0; k < 2; k++) {
            snprintf(sub, sizeof sub, "model.draw.goal[%d]", k);
            if ((st = expr_read(m, c, sub, READ_NOINPUT, &m->goal[k], e))) return st;
        }
    if (m->has_goal && m->body_names[0]) strcat(m->body_names, ",goal");
    if (dg_cfg_has(c, "model.draw.circles") &&
        (st = dg_cfg_get_list(c, "model.draw.circles", DG_CFG_F32, 3, m->circle, 0, 16, &m->ncircles, e)))
        return st;
    return DG_OK;
}

/* The grid solver's: periodic axes, the target and the sets to avoid. */
static dg_status read_grid_sets(dg_model *m, dg_cfg *c, dg_err *e) {
    dg_status st;
    char sub[160];
    const int np = dg_cfg_has(c, "model.periodic") ? dg_cfg_len(c, "model.periodic") : 0;
    for (int k = 0; k < np; k++) {
        const char *nm = NULL;
        snprintf(sub, sizeof sub, "model.periodic[%d]", k);
        if ((st = dg_cfg_get(c, sub, DG_CFG_STR, &nm, e))) return st;
        const int v = nm ? find_name(m, nm) : -1;
        if (v < 0 || m->kind[v] != DG_MV_STATE) return dg_cfg_error(c, sub, e, "'%s' is not a state variable", nm);
        m->periodic[v - m->s0] = 1;
    }
    /* the sets may read t, the game's time (0 at the start of the horizon), unless the model names
     * something else t */
    const int sets = dg_cfg_has(c, "model.target") || dg_cfg_has(c, "model.avoid");
    m->t_var = find_name(m, "t");
    if (m->t_var >= 0 && m->kind[m->t_var] != DG_MV_TIME) m->t_var = -1;
    if (sets && m->t_var < 0 && find_name(m, "t") < 0 && m->nnames < DG_MODEL_MAX_NAMES) {
        if ((st = add_name(m, c, "model", "t", DG_MV_TIME, e))) return st;
        m->t_var = m->nnames - 1;
    }
    const unsigned state_only = (1u << DG_MV_STATE) | (1u << DG_MV_CONST) | (1u << DG_MV_TIME);
    if ((m->has_target = dg_cfg_has(c, "model.target")) &&
        (st = expr_read(m, c, "model.target", state_only, &m->target, e)))
        return st;
    if ((m->has_avoid = dg_cfg_has(c, "model.avoid")) && (st = expr_read(m, c, "model.avoid", state_only, &m->avoid, e)))
        return st;
    for (int k = 0; m->t_var >= 0 && k < m->target.nv; k++) m->target_moves |= m->target.var[k] == m->t_var;
    for (int k = 0; m->t_var >= 0 && k < m->avoid.nv; k++) m->avoid_moves |= m->avoid.var[k] == m->t_var;
    return DG_OK;
}

/* model.players (general-sum, docs/models.md): a map player: {input: NAME, costs: {term: weight, ...},
 * observe: [expressions]} of 2 to DG_MODEL_MAX_PLAYERS learned players, in order. Each input belongs to
 * one player; a term a player's costs do not name weighs 0 in its cost. Read after the inputs, costs
 * and model.observe. */
static dg_status read_players(dg_model *m, dg_cfg *c, dg_err *e) {
    const char *path = "model.players";
    if (!dg_cfg_has(c, path)) return DG_OK;
    const int np = dg_cfg_len(c, path);
    if (np < 2 || np > DG_MODEL_MAX_PLAYERS || !dg_cfg_key(c, path, 0))
        return dg_cfg_error(c, path, e, "a map of 2 to %d players name: {input, costs, observe}", DG_MODEL_MAX_PLAYERS);
    if (dg_cfg_has(c, "model.observe2"))
        return dg_cfg_error(c, "model.observe2", e, "is the zero-sum max player's: with model.players each player "
                            "sees model.observe or its own players.<name>.observe");
    m->nplayers = np;
    for (int q = 0; q < np; q++) {
        const char *pn = dg_cfg_key(c, path, q), *in = NULL;
        char at[160], sub[200];
        if (!pn) return dg_cfg_error(c, path, e, "a map of players name: {input, costs, observe}");
        snprintf(at, sizeof at, "%s.%s", path, pn);
        if (!name_plain(pn, sizeof m->player_name[q], ""))
            return dg_cfg_error(c, at, e, "a player's name is letters, digits and _ (at most %zu)",
                                sizeof m->player_name[q] - 1);
        snprintf(m->player_name[q], sizeof m->player_name[q], "%s", pn);
        snprintf(sub, sizeof sub, "%s.input", at);
        dg_status st = dg_cfg_get(c, sub, DG_CFG_STR, &in, e);
        if (st) return st;
        if (!in) return dg_cfg_error(c, sub, e, "missing: the model.inputs entry this player controls");
        int k = 0;
        while (k < m->ninputs && strcmp(m->in[k].name, in)) k++;
        if (k == m->ninputs) return dg_cfg_error(c, sub, e, "'%s' is not one of model.inputs", in);
        if (!m->in[k].learned) return dg_cfg_error(c, sub, e, "'%s' says learned: false, but a player controls it", in);
        if (m->in[k].ball) return dg_cfg_error(c, sub, e, "the gradient solver needs '%s' in a box (set: box)", in);
        for (int r = 0; r < q; r++)
            if (m->player_input[r] == k)
                return dg_cfg_error(c, sub, e, "'%s' is player %s's input already", in, m->player_name[r]);
        m->player_input[q] = k;
        snprintf(sub, sizeof sub, "%s.costs", at);
        const int nc = dg_cfg_has(c, sub) ? dg_cfg_len(c, sub) : 0;
        if (nc < 1 || !dg_cfg_key(c, sub, 0))
            return dg_cfg_error(c, sub, e, "a map term: weight of the model's costs in this player's own cost");
        for (int j = 0; j < nc; j++) {
            const char *tn = dg_cfg_key(c, sub, j);
            char key[48], wsub[280];
            snprintf(key, sizeof key, "loss.%s", tn ? tn : "");
            snprintf(wsub, sizeof wsub, "%s.%s", sub, tn ? tn : "");
            int t = 0;
            while (t < m->ncost && strcmp(m->cost_key[t], key)) t++;
            if (!tn || t == m->ncost) return dg_cfg_error(c, wsub, e, "'%s' is not a term of model.costs", tn ? tn : "");
            if ((st = dg_cfg_get(c, wsub, DG_CFG_F64, &m->player_weight[q][t], e))) return st;
            if (!isfinite(m->player_weight[q][t])) return dg_cfg_error(c, wsub, e, "must be a finite number");
        }
        m->player_obs[q] = 0;
        snprintf(sub, sizeof sub, "%s.observe", at);
        if (dg_cfg_has(c, sub)) {
            if (q == 0 && m->nobs[0])
                return dg_cfg_error(c, sub, e, "the first player sees model.observe: give its observation once");
            if ((st = read_exprs(m, c, sub, READ_NOINPUT, DG_MODEL_MAX_OBS, &m->nobs[q], m->obs[q], e))) return st;
            m->player_obs[q] = q;
        }
    }
    for (int k = 0; k < m->ninputs; k++)  /* every learned input is a player's */
        if (m->in[k].learned && !player_owns(c, m->in[k].name)) {
            char sub[160];
            snprintf(sub, sizeof sub, "model.inputs.%s.learned", m->in[k].name);
            return dg_cfg_error(c, sub, e, "with model.players a learned input is a player's input: name it there");
        }
    return DG_OK;
}

static dg_status load(dg_model *m, dg_cfg *c, double dt, model_keys *mk, dg_err *e) {
    dg_status st;
    if ((st = dg_cfg_require(c, "model", e)) || (st = dg_key_read(c, &dg_model_key_table[0], mk, e))) return st;
    if (!name_plain(mk->name, sizeof m->game, "-"))
        return dg_cfg_error(c, "model.name", e, "'%s' is not a game's name (letters, digits, _ and -, at most %zu, "
                            "a letter first)", mk->name, sizeof m->game - 1);
    snprintf(m->game, sizeof m->game, "%s", mk->name);
    if ((st = read_variables(m, c, dt, e)) || (st = read_inputs(m, c, e)) || (st = read_dynamics(m, c, e)) ||
        (st = read_diffusion(m, c, e)))
        return st;
    /* observations */
    if ((st = read_exprs(m, c, "model.observe", READ_NOINPUT, DG_MODEL_MAX_OBS, &m->nobs[0], m->obs[0], e))) return st;
    if (!dg_cfg_has(c, "model.players") && m->ninputs == 2 && m->in[1].learned &&
        (st = read_exprs(m, c, "model.observe2", READ_NOINPUT, DG_MODEL_MAX_OBS, &m->nobs[1], m->obs[1], e)))
        return st;
    if ((st = read_costs(m, c, e)) || (st = read_players(m, c, e)) || (st = read_metrics(m, c, e)) || (st = read_reset(m, c, e)) ||
        (st = read_draw(m, c, e)) || (st = read_grid_sets(m, c, e)))
        return st;
    return DG_OK;
}

dg_model *dg_model_load(dg_cfg *cfg, double dt, dg_err *e) {
    dg_model *m = calloc(1, sizeof *m);
    if (!m) {
        dg_err_set(e, DG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&m->lock, NULL);
    model_keys mk;
    if (load(m, cfg, dt, &mk, e) || dg_key_read(cfg, &dg_model_key_table[1], &mk, e)) {
        dg_model_free(m);
        return NULL;
    }
    m->interpreted = 1;
    if (mk.compile) m->ncompiled = dg_model_compile(m);
    return m;
}

void dg_model_mark_other(dg_cfg *cfg, int grid) {
    static const char *const HJI[] = {"t_end", "mode", "accuracy", "grid", "solver", "obstacles", "payoff", "cost",
                                      "stationary", NULL};
    static const char *const BPTT[] = {"seed", "env", "loss", "policy", "train", "pg", "render", NULL};
    for (const char *const *k = grid ? BPTT : HJI; *k; k++)
        if (dg_cfg_has(cfg, *k)) dg_cfg_mark_used(cfg, *k);
}

void dg_model_free(dg_model *m) {
    if (!m) return;
    for (int k = 0; k < DG_MODEL_MAX_STATE; k++) expr_free(&m->dyn[k]);
    for (int k = 0; k < DG_MODEL_MAX_STATE; k++) expr_free(&m->diff[k]);
    for (int p = 0; p < DG_MODEL_MAX_PLAYERS; p++)
        for (int k = 0; k < DG_MODEL_MAX_OBS; k++) expr_free(&m->obs[p][k]);
    for (int k = 0; k < DG_MODEL_MAX_TERMS; k++) expr_free(&m->cost[k]);
    for (int k = 0; k < 4; k++) expr_free(&m->metric[k]);
    for (int k = 0; k < DG_MODEL_MAX_RESET; k++) expr_free(&m->reset[k].where);
    for (int b = 0; b < 4; b++) expr_free(&m->body[b][0]), expr_free(&m->body[b][1]);
    expr_free(&m->target);
    expr_free(&m->avoid);
    expr_free(&m->goal[0]);
    expr_free(&m->goal[1]);
    if (m->lib) dlclose(m->lib);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
