"""Open-loop LQ Nash references for configs/models/lq_nash2.yaml and lq_nash3.yaml, and the
game-Jacobian check of configs/models/gs_saddle.yaml, built here from the games' own equations
(no difgames code, no third-party packages).

In open-loop mode each player's parameters are its actions u_p (one a step), so a linear game with
quadratic costs is a static quadratic game in the stacked plans u. Each player's cost is quadratic,
so its gradient in its own plan is affine: the stacked game gradient omega(u) = J u + omega(0), taken
here by central differences, which are exact for a quadratic (step 1, no truncation error). The Nash
equilibrium solves J u = -omega(0) (Gaussian elimination). Usage:
    lq_nash_ref.py GAME CHECKPOINT     compare the checkpoint's plans with the equilibrium:
                                       exit 0 when max |u - u*| <= 1e-5 max |u*|
    lq_nash_ref.py GAME                print the equilibrium and the eigenvalues of J (2 x 2 only)
"""
import cmath
import math
import json
import struct
import sys


def lq2(u):
    """configs/models/lq_nash2.yaml: players alice (u), bob (v); returns their episode costs."""
    a, c, dt, H = 0.3, 0.5, 0.1, 10
    U, V = u[:H], u[H:]
    x, y = 0.8, -0.5
    J = [0.0, 0.0]
    for t in range(H):
        x = x + dt * (a * x + c * y + U[t])      # the dynamics in order: y's update reads the new x
        y = y + dt * (-c * x + a * y + V[t])
        xx, yy, gap, uu, vv = x * x, y * y, (x - y - 0.5) ** 2, U[t] ** 2, V[t] ** 2
        J[0] += 1.0 * xx + 0.5 * gap + 0.2 * uu
        J[1] += 1.0 * yy + 2.0 * gap + 0.4 * vv
    return [j / H for j in J]


def lq3(u):
    """configs/models/lq_nash3.yaml: players p1 (u), p2 (v), p3 (w)."""
    a, c, dt, H = 0.2, 0.4, 0.1, 10
    U, V, W = u[:H], u[H:2 * H], u[2 * H:]
    x, y, z = 0.6, -0.4, 0.3
    J = [0.0, 0.0, 0.0]
    for t in range(H):
        x = x + dt * (a * x + c * (y - z) + U[t])
        y = y + dt * (a * y + c * (z - x) + V[t])
        z = z + dt * (a * z + c * (x - y) + W[t])
        xx, yy, zz = x * x, y * y, z * z
        xy, yz = (x - y - 0.3) ** 2, (y - z + 0.2) ** 2
        J[0] += 1.0 * xx + 1.0 * xy + 0.3 * U[t] ** 2
        J[1] += 0.5 * yy + 0.5 * xy + 1.0 * yz + 0.3 * V[t] ** 2
        J[2] += 1.0 * zz + 2.0 * yz + 0.5 * xx + 0.5 * W[t] ** 2
    return [j / H for j in J]


def saddle(u):
    """configs/models/gs_saddle.yaml: a static game (one step, dt 1, the state unused):
    f1 = u^2/2 + 2 u v - 0.3 u, f2 = v^2/2 + 2 u v - 0.2 v (Mazumdar et al. 2020's kind)."""
    U, V = u[0], u[1]
    return [0.5 * U * U + 2 * U * V - 0.3 * U, 0.5 * V * V + 2 * U * V - 0.2 * V]


def cycle(u):
    """configs/models/gs_cycle.yaml: two players of two actions, R the rotation by 45 degrees:
    f1 = |u|^2/2 + 2 u'R v - 0.2 (u1 + 0.5 u2), f2 = |v|^2/2 + 2 v'R u - 0.2 (v1 - 0.5 v2)."""
    c, s = math.cos(math.pi / 4), math.sin(math.pi / 4)
    R = [[c, -s], [s, c]]
    U, V = u[0:2], u[2:4]
    uRv = sum(U[i] * R[i][j] * V[j] for i in range(2) for j in range(2))
    vRu = sum(V[i] * R[i][j] * U[j] for i in range(2) for j in range(2))
    f1 = 0.5 * (U[0] ** 2 + U[1] ** 2) + 2 * uRv - 0.2 * (U[0] + 0.5 * U[1])
    f2 = 0.5 * (V[0] ** 2 + V[1] ** 2) + 2 * vRu - 0.2 * (V[0] - 0.5 * V[1])
    return [f1, f2]


GAMES = {"lq_nash2": (lq2, 2, 10), "lq_nash3": (lq3, 3, 10), "gs_saddle": (saddle, 2, 1), "gs_cycle": (cycle, 2, 2)}


def det(A):
    """The determinant of a (complex) square matrix by elimination with partial pivoting."""
    M = [list(r) for r in A]
    n, d = len(M), 1.0
    for k in range(n):
        piv = max(range(k, n), key=lambda i: abs(M[i][k]))
        if M[piv][k] == 0:
            return 0.0
        if piv != k:
            M[k], M[piv] = M[piv], M[k]
            d = -d
        d *= M[k][k]
        for i in range(k + 1, n):
            f = M[i][k] / M[k][k]
            for j in range(k, n):
                M[i][j] -= f * M[k][j]
    return d


def game_gradient(cost, n, H, u):
    """omega(u): each player's cost differentiated in its own plan (central differences, step 1)."""
    g = []
    for p in range(n):
        for t in range(H):
            i = p * H + t
            up, um = list(u), list(u)
            up[i] += 1.0
            um[i] -= 1.0
            g.append((cost(up)[p] - cost(um)[p]) / 2.0)
    return g


def solve(A, b):
    """A x = b by Gaussian elimination with partial pivoting."""
    n = len(b)
    M = [list(A[i]) + [b[i]] for i in range(n)]
    for k in range(n):
        piv = max(range(k, n), key=lambda i: abs(M[i][k]))
        M[k], M[piv] = M[piv], M[k]
        for i in range(k + 1, n):
            f = M[i][k] / M[k][k]
            for j in range(k, n + 1):
                M[i][j] -= f * M[k][j]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (M[i][n] - sum(M[i][j] * x[j] for j in range(i + 1, n))) / M[i][i]
    return x


def equilibrium(name):
    cost, n, H = GAMES[name]
    N = n * H
    w0 = game_gradient(cost, n, H, [0.0] * N)
    cols = []
    for j in range(N):
        e = [0.0] * N
        e[j] = 1.0
        gp = game_gradient(cost, n, H, e)
        cols.append([gp[i] - w0[i] for i in range(N)])  # omega is affine: J e_j = omega(e_j) - omega(0)
    J = [[cols[j][i] for j in range(N)] for i in range(N)]
    return solve(J, [-w for w in w0]), J


def plans(path):
    """The players' plans from a checkpoint, in the players' order (plan, evader_plan, player2_plan)."""
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    head = json.loads(b[8:8 + n])
    out = []
    for name in ["plan", "evader_plan", "player2_plan", "player3_plan"]:
        if name not in head:
            break
        t = head[name]
        lo, hi = t["data_offsets"]
        fmt = {"F64": "d", "F32": "f"}[t["dtype"]]
        raw = b[8 + n + lo:8 + n + hi]
        out += list(struct.unpack("<%d%s" % (len(raw) // struct.calcsize(fmt), fmt), raw))
    return out


def main():
    name = sys.argv[1]
    ustar, J = equilibrium(name)
    if len(sys.argv) == 2:
        print("equilibrium", " ".join("%.9g" % v for v in ustar))
        if len(J) == 2:
            tr, dt = J[0][0] + J[1][1], J[0][0] * J[1][1] - J[0][1] * J[1][0]
            d = cmath.sqrt(tr * tr / 4 - dt)
            print("jacobian", J, "eigenvalues", tr / 2 + d, tr / 2 - d)
        if name == "gs_cycle":  # the four claimed eigenvalues: J - lambda I singular for each
            r2 = math.sqrt(2)
            lams = [1 + r2 + r2 * 1j, 1 + r2 - r2 * 1j, 1 - r2 + r2 * 1j, 1 - r2 - r2 * 1j]
            dets = [abs(det([[J[i][j] - (l if i == j else 0) for j in range(4)] for i in range(4)])) for l in lams]
            print("eigenvalues 1 +- sqrt(2) +- sqrt(2) i: max |det(J - lambda I)| = %.3g" % max(dets))
        return 0
    u = [4.0 * math.tanh(p) for p in plans(sys.argv[2])]  # inputs in [-4, 4]: u = 4 tanh(plan)
    if len(u) != len(ustar):
        print("checkpoint has %d plan values, the game %d" % (len(u), len(ustar)))
        return 1
    gap = max(abs(a - b) for a, b in zip(u, ustar))
    scale = max(abs(b) for b in ustar)
    print("%s: max |u - u*| = %.3g, max |u*| = %.3g, relative %.3g" % (name, gap, scale, gap / scale))
    return 0 if gap <= 1e-5 * scale else 1


if __name__ == "__main__":
    sys.exit(main())
