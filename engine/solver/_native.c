/* engine.solver._native: the whist and tennis whist search of engine/solver in C.
 *
 * The same algorithm as the Python reference (engine/solver/search.py with deals.TrickDeal):
 * fail-soft alpha-beta on tricks won by the maximising side, MTD(f) for each root card's exact
 * value, a transposition table of bounds at trick starts keyed by relative ranks, equivalent
 * cards merged, the same move order and quick-trick bounds. Rules: follow suit; the highest
 * trump, else the highest card of the suit led, wins (engine.games.tricks). Optional: where it
 * is not built, engine.solver runs the Python search (tests check they agree).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXP 6
#define INF (1 << 20)
#define TABLE_BITS 20
#define BUCKET 4

typedef uint64_t u64;

typedef struct {
    u64 key[MAXP]; /* each hand's cards by relative rank, 13 bits a suit */
    int8_t leader, used, lo, hi;
    int8_t left; /* cards a hand at the entry's position: deeper searches are kept longer */
} Entry;

typedef struct {
    int n, players, trump, leader, tlen, aborted;
    u64 hands[MAXP];
    int nxt[MAXP], maxside[MAXP], tc[MAXP], ts[MAXP];
    long long nodes, max_nodes;
    Entry *table;
} S;

static const u64 SUIT = 0x1FFFULL;

static int popc(u64 x) { return __builtin_popcountll(x); }
static int top_bit(u64 x) { return 63 - __builtin_clzll(x); }

static int power(const S *s, int c, int led) {
    int suit = c / 13;
    if (suit == s->trump) return 100 + c % 13;
    return suit == led / 13 ? c % 13 : -1;
}

static int to_move(const S *s) { return s->tlen ? s->nxt[s->ts[s->tlen - 1]] : s->leader; }

static u64 legal(const S *s, int seat) {
    u64 hand = s->hands[seat];
    if (s->tlen) {
        u64 same = hand & (SUIT << (13 * (s->tc[0] / 13)));
        if (same) return same;
    }
    return hand;
}

static u64 present(const S *s) {
    u64 m = 0;
    for (int i = 0; i < s->n; i++) m |= s->hands[i];
    for (int i = 0; i < s->tlen; i++) m |= 1ULL << s->tc[i];
    return m;
}

/* One card of each run of equivalent legal cards (the run's top), in the search order. */
static int moves(const S *s, int seat, int *out, u64 *runs) {
    u64 lg = legal(s, seat), pr = present(s);
    int k = 0;
    for (int suit = 0; suit < 4; suit++) {
        u64 mine = lg & (SUIT << (13 * suit)), there = pr & (SUIT << (13 * suit));
        if (!mine) continue;
        int c = top_bit(mine);
        u64 run = 0;
        for (;;) {
            run |= 1ULL << c;
            u64 below = there & ((1ULL << c) - 1);
            if (!below) break;
            int nx = top_bit(below);
            if (!(mine >> nx & 1)) {
                out[k] = top_bit(run);
                if (runs) runs[k] = run;
                k++;
                run = 0;
                u64 rest = mine & ((1ULL << nx) - 1);
                if (!rest) break;
                nx = top_bit(rest);
            }
            c = nx;
        }
        if (run) {
            out[k] = top_bit(run);
            if (runs) runs[k] = run;
            k++;
        }
    }
    if (k < 2) return k;
    /* Sort keys: leading, strongest first; following, the cheapest card taking the trick for a
       side not yet winning it, else the cheapest card (as deals.TrickDeal/Deal.order). */
    int key[13];
    if (!s->tlen) {
        for (int i = 0; i < k; i++) key[i] = -((out[i] / 13) * 64 + out[i] % 13);
    } else {
        int led = s->tc[0], bi = 0, best = power(s, s->tc[0], led);
        for (int i = 1; i < s->tlen; i++) {
            int p = power(s, s->tc[i], led);
            if (p > best) best = p, bi = i;
        }
        int ours = s->maxside[s->ts[bi]] == s->maxside[seat];
        int last = s->tlen == s->players - 1;
        for (int i = 0; i < k; i++) {
            int p = power(s, out[i], led), ok = (out[i] / 13) * 64 + out[i] % 13;
            if (ours && last)
                key[i] = p;
            else if (p > best)
                key[i] = (ours ? 1000 : 0) + p;
            else
                key[i] = (ours ? 0 : 1000) + ok;
        }
    }
    for (int i = 1; i < k; i++) { /* insertion sort, stable */
        int c = out[i], kk = key[i];
        u64 r = runs ? runs[i] : 0;
        int j = i - 1;
        while (j >= 0 && key[j] > kk) {
            out[j + 1] = out[j];
            key[j + 1] = key[j];
            if (runs) runs[j + 1] = runs[j];
            j--;
        }
        out[j + 1] = c;
        key[j + 1] = kk;
        if (runs) runs[j + 1] = r;
    }
    return k;
}

static int quick_tricks(const S *s) {
    int leader = s->leader, side = s->maxside[leader];
    u64 mine = s->hands[leader], pr = 0, trumps = SUIT << (13 * s->trump);
    for (int i = 0; i < s->n; i++) pr |= s->hands[i];
    int total = 0;
    for (int suit = 0; suit < 4; suit++) {
        u64 mask = SUIT << (13 * suit), there = pr & mask, held = mine & mask;
        int seq = 0;
        while (there) {
            int top = top_bit(there);
            if (!(held >> top & 1)) break;
            seq++;
            there ^= 1ULL << top;
        }
        if (seq && suit != s->trump)
            for (int i = 0; i < s->n; i++)
                if (s->nxt[i] >= 0 && s->maxside[i] != side && (s->hands[i] & trumps)) {
                    int len = popc(s->hands[i] & mask);
                    if (len < seq) seq = len;
                }
        total += seq;
    }
    return total;
}

/* The top trumps one player holds in sequence each win a trick whoever leads (nothing beats
   them, and the holder plays each in its own trick): tricks for the holder's side. */
static int top_trumps(const S *s, int *holder) {
    u64 trumps = SUIT << (13 * s->trump), pr = 0;
    for (int i = 0; i < s->n; i++) pr |= s->hands[i] & trumps;
    *holder = -1;
    if (!pr) return 0;
    int top = top_bit(pr), seq = 0;
    for (int i = 0; i < s->n; i++)
        if (s->hands[i] >> top & 1) *holder = i;
    u64 held = s->hands[*holder];
    while (pr && (held >> top_bit(pr) & 1)) {
        seq++;
        pr ^= 1ULL << top_bit(pr);
    }
    return seq;
}

static void make_key(const S *s, u64 *key) {
    u64 pr = 0;
    for (int i = 0; i < s->n; i++) pr |= s->hands[i];
    memset(key, 0, sizeof(u64) * MAXP);
    for (int suit = 0; suit < 4; suit++) {
        int idx = 0;
        for (int r = 0; r < 13; r++) {
            int c = suit * 13 + r;
            if (!(pr >> c & 1)) continue;
            for (int i = 0; i < s->n; i++)
                if (s->hands[i] >> c & 1) key[i] |= 1ULL << (suit * 13 + idx);
            idx++;
        }
    }
}

/* The bucket of a key (BUCKET entries): the entry holding it, else NULL and *free_slot the entry
   to replace (an unused one, else the one with fewest cards left: the smallest search to redo). */
static Entry *slot(const S *s, const u64 *key, Entry **free_slot) {
    u64 h = (u64)s->leader * 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < s->n; i++) {
        h ^= key[i] + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ULL;
    }
    h ^= h >> 31;
    Entry *b = &s->table[(h & ((1ULL << TABLE_BITS) - 1)) & ~(u64)(BUCKET - 1)];
    Entry *spare = &b[0];
    for (int i = 0; i < BUCKET; i++) {
        if (b[i].used && b[i].leader == s->leader && !memcmp(b[i].key, key, sizeof(u64) * MAXP))
            return &b[i];
        if (spare->used && (!b[i].used || b[i].left < spare->left)) spare = &b[i];
    }
    if (free_slot) *free_slot = spare;
    return NULL;
}

static int value(S *s, int alpha, int beta);

/* The value of playing card c now, for the maximising side (within the window, fail-soft). */
static int after(S *s, int c, int alpha, int beta) {
    int seat = to_move(s);
    s->hands[seat] &= ~(1ULL << c);
    s->tc[s->tlen] = c;
    s->ts[s->tlen] = seat;
    s->tlen++;
    int v;
    if (s->tlen < s->players) {
        v = value(s, alpha, beta);
    } else {
        int led = s->tc[0], bi = 0, best = power(s, led, led);
        for (int i = 1; i < s->tlen; i++) {
            int p = power(s, s->tc[i], led);
            if (p > best) best = p, bi = i;
        }
        int w = s->ts[bi], gain = s->maxside[w] ? 1 : 0;
        int stc[MAXP], sts[MAXP], sleader = s->leader;
        memcpy(stc, s->tc, sizeof stc);
        memcpy(sts, s->ts, sizeof sts);
        s->tlen = 0;
        s->leader = w;
        v = s->hands[w] ? gain + value(s, alpha - gain, beta - gain) : gain;
        memcpy(s->tc, stc, sizeof stc);
        memcpy(s->ts, sts, sizeof sts);
        s->leader = sleader;
        s->tlen = s->players;
    }
    s->tlen--;
    s->hands[seat] |= 1ULL << c;
    return v;
}

static int value(S *s, int alpha, int beta) {
    if (s->aborted || ++s->nodes > s->max_nodes) {
        s->aborted = 1;
        return 0;
    }
    int start = s->tlen == 0, lo = 0, hi = 0, a0 = alpha, b0 = beta;
    u64 key[MAXP];
    if (start) {
        make_key(s, key);
        Entry *e = slot(s, key, NULL);
        if (e) {
            lo = e->lo;
            hi = e->hi;
        } else {
            int left = popc(s->hands[s->leader]), holder, sure = quick_tricks(s);
            int trumps = top_trumps(s, &holder), ours = s->maxside[s->leader];
            /* The leader's quick tricks, and the top trumps of another player (the leader's own
               are among its quick tricks already): each wins a trick of its own. */
            int lead_side = sure, other = 0;
            if (holder >= 0 && s->maxside[holder] != ours) other = trumps;
            if (holder >= 0 && holder != s->leader && s->maxside[holder] == ours) lead_side += trumps;
            if (lead_side > left) lead_side = left;
            if (lead_side + other > left) other = left - lead_side;
            lo = ours ? lead_side : other;
            hi = left - (ours ? other : lead_side);
        }
        if (lo >= beta || lo == hi) return lo;
        if (hi <= alpha) return hi;
        if (lo > alpha) alpha = lo;
        if (hi < beta) beta = hi;
        a0 = alpha;
        b0 = beta;
    }
    int seat = to_move(s), mv[13];
    int k = moves(s, seat, mv, NULL), maximise = s->maxside[seat];
    int best = maximise ? -INF : INF;
    for (int i = 0; i < k; i++) {
        int v = after(s, mv[i], alpha, beta);
        if (s->aborted) return 0;
        if (maximise) {
            if (v > best) best = v;
            if (v > alpha) alpha = v;
        } else {
            if (v < best) best = v;
            if (v < beta) beta = v;
        }
        if (alpha >= beta) break;
    }
    if (start) {
        if (best <= a0) {
            if (best < hi) hi = best;
        } else if (best >= b0) {
            if (best > lo) lo = best;
        } else {
            lo = hi = best;
        }
        Entry *spare = NULL, *e = slot(s, key, &spare);
        if (!e) e = spare;
        memcpy(e->key, key, sizeof key);
        e->left = (int8_t)popc(s->hands[s->leader]);
        e->leader = (int8_t)s->leader;
        e->used = 1;
        e->lo = (int8_t)lo;
        e->hi = (int8_t)hi;
    }
    return best;
}

static int exact_after(S *s, int c, int guess) {
    int lo = -INF, hi = INF, g = guess;
    while (lo < hi && !s->aborted) {
        int beta = g == lo ? g + 1 : g;
        g = after(s, c, beta - 1, beta);
        if (g < beta)
            hi = g;
        else
            lo = g;
    }
    return g;
}

static int read_ints(PyObject *seq, int *out, int max, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > max) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: at most %d", what, max);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        out[i] = (int)v;
    }
    Py_DECREF(fast);
    return (int)n;
}

/* solve(hands, nxt, maxside, trump, trick_cards, trick_seats, leader, max_nodes)
   -> (list of (card, value) for every legal card of the seat to move, nodes), or None when the
   search took more than max_nodes nodes. */
static PyObject *solve(PyObject *self, PyObject *args) {
    PyObject *hands, *nxt, *maxside, *tcards, *tseats;
    int trump, leader;
    long long max_nodes;
    if (!PyArg_ParseTuple(args, "OOOiOOiL", &hands, &nxt, &maxside, &trump, &tcards, &tseats,
                          &leader, &max_nodes))
        return NULL;
    S s;
    memset(&s, 0, sizeof s);
    PyObject *fast = PySequence_Fast(hands, "hands");
    if (!fast) return NULL;
    s.n = (int)PySequence_Fast_GET_SIZE(fast);
    if (s.n > MAXP || s.n < 2) {
        Py_DECREF(fast);
        return PyErr_Format(PyExc_ValueError, "hands: 2 to %d seats", MAXP);
    }
    for (int i = 0; i < s.n; i++) {
        s.hands[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (PyErr_Occurred()) {
            Py_DECREF(fast);
            return NULL;
        }
    }
    Py_DECREF(fast);
    if (read_ints(nxt, s.nxt, MAXP, "nxt") != s.n || read_ints(maxside, s.maxside, MAXP, "maxside") != s.n)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "one value a seat");
    int nc = read_ints(tcards, s.tc, MAXP, "trick_cards");
    if (nc < 0 || read_ints(tseats, s.ts, MAXP, "trick_seats") != nc)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "one seat a card");
    s.tlen = nc;
    s.trump = trump;
    s.leader = leader;
    s.max_nodes = max_nodes;
    for (int i = 0; i < s.n; i++) s.players += s.nxt[i] >= 0;
    s.table = calloc((size_t)1 << TABLE_BITS, sizeof(Entry));
    if (!s.table) return PyErr_NoMemory();
    int mv[13], values[13];
    u64 runs[13];
    int seat = to_move(&s), k, guess = 0;
    Py_BEGIN_ALLOW_THREADS
    k = moves(&s, seat, mv, runs);
    for (int i = 0; i < k && !s.aborted; i++) guess = values[i] = exact_after(&s, mv[i], guess);
    Py_END_ALLOW_THREADS
    free(s.table);
    if (s.aborted) Py_RETURN_NONE;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (int i = 0; i < k; i++)
        for (u64 r = runs[i]; r; r &= r - 1) {
            PyObject *pair = Py_BuildValue("(ii)", __builtin_ctzll(r), values[i]);
            if (!pair || PyList_Append(out, pair) < 0) {
                Py_XDECREF(pair);
                Py_DECREF(out);
                return NULL;
            }
            Py_DECREF(pair);
        }
    return Py_BuildValue("(NL)", out, s.nodes);
}

static PyMethodDef METHODS[] = {
    {"solve", solve, METH_VARARGS, "Every legal card's value (whist, tennis whist)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "engine.solver._native",
                                    "The trick games' search in C.", -1, METHODS};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&MODULE); }
