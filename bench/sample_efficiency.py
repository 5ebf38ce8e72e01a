"""Sample efficiency of BPTT against a policy-gradient baseline.

Both methods train in the same engine (`difgames pg`, src/solver/pg.c) and are
measured by the same number: the deterministic (mean-action) BPTT episode
loss of the reach (and chase) benchmark task, configs/bench/<game>.yaml as
docs/games/<game>.md defines them, on one fixed evaluation batch (256
episodes, eval seed 1000003), evaluated on a log grid of environment steps
(40 points a decade). BPTT counts batch x horizon env steps an epoch (the
backward pass re-uses the forward's states and counts no extra steps); policy
gradient counts its sampled steps.

Stages (results are cached in --workdir, one .jsonl per run; --fresh reruns):
  1. bptt     BPTT at the config's defaults, seeds 0, 1, 2. The target loss of a
              game is 1.1 x the largest of the three final evaluation losses
              (so every BPTT seed reaches it).
  2. tune     on a held-out seed (10): a small grid of PPO and REINFORCE settings
              and of BPTT batch/lr (TUNE, BPTT_GRID below). A PG run goes on until
              3 evaluations in a row are at or below the target, or a cap (10x
              BPTT's default env steps on reach, 4x on chase); a BPTT run trains
              for the cap (at most 20x its default epochs). The winner needs the
              fewest steps to 3 in a row at or below the target (then: to the
              first reach, then the best loss).
  3. measure  the winning PG setting on seeds 0, 1, 2, each until 3 evaluations in
              a row are at or below the target or BUDGET x BPTT's default steps
              (100x reach, 20x chase); the winning BPTT setting too.
  4. report   env steps to the target per method and seed, medians, ratios; if
              a PG seed never reaches the target, a second target (the largest
              best loss of the PG seeds) is reported as well. Writes
              docs/sample_efficiency.md and docs/sample_efficiency.png (drawn by
              `difgames pg --plot`, the library's plot API).

usage: python3 bench/sample_efficiency.py [--difgames build/difgames] [--jobs 2]
           [--stages bptt,tune,measure,report] [--games reach,chase] [--fresh]
"""
import argparse, concurrent.futures as cf, datetime, json, os, platform, subprocess, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--difgames", default=os.path.join(ROOT, "build", "difgames"))
ap.add_argument("--workdir", default=os.path.join(ROOT, "runs", "sample_efficiency"))
ap.add_argument("--games", default="reach,chase")
ap.add_argument("--seeds", default="0,1,2")
ap.add_argument("--tune-seed", type=int, default=10)
ap.add_argument("--jobs", type=int, default=2, help="runs in parallel (each single-threaded)")
ap.add_argument("--stages", default="bptt,tune,measure,report")
ap.add_argument("--fresh", action="store_true", help="ignore cached runs")
ap.add_argument("--md", default=os.path.join(ROOT, "docs", "sample_efficiency.md"))
ap.add_argument("--png", default=os.path.join(ROOT, "docs", "sample_efficiency.png"))
args = ap.parse_args()

GAMES = args.games.split(",")
SEEDS = [int(s) for s in args.seeds.split(",")]
STAGES = args.stages.split(",")
os.makedirs(args.workdir, exist_ok=True)
RESULTS = os.path.join(args.workdir, "results.json")  # chosen settings and targets, between stages

# The tuning grids (policy gradient: algorithm x lr x initial log sigma x
# episodes an iteration; BPTT: episodes an epoch x lr), and the caps, in
# multiples of BPTT's default env steps. Everything else stays at its default.
# chase's PG grid is smaller (its runs are long): it keeps the rates around
# what was stable there in a pilot (REINFORCE at lr 3e-3 diverged repeatedly).
def pg_grid(algo, lrs, stds, batches):
    return [dict(algo=algo, lr=lr, log_std=ls, batch=b) for lr in lrs for ls in stds for b in batches]


TUNE = {
    "reach": dict(cap=10.0, pg=pg_grid("ppo", (3e-4, 1e-3), (-1.0, -0.5, 0.0), (8, 32)) +
                  pg_grid("reinforce", (1e-3, 3e-3, 1e-2), (-1.0, -0.5), (4, 8, 32))),
    "chase": dict(cap=4.0, pg=pg_grid("ppo", (1e-3, 3e-3), (-1.0, -0.5), (16, 32)) +
                  pg_grid("reinforce", (3e-4, 1e-3), (-1.0, -0.5), (8, 32))),
}
BPTT_GRID = [dict(bptt_batch=b, bptt_lr=lr) for b in (1, 4, 16, 64) for lr in (1e-3, 3e-3, 1e-2, 3e-2)]
# the policy-gradient budget of a measured run, x BPTT's default env steps
BUDGET = {"reach": 100.0, "chase": 20.0}
DEFAULT_LR = {"reach": 1e-3, "chase": 3e-3}  # train.lr of configs/bench/<game>.yaml (for labels)


def config(game):
    return os.path.join(ROOT, "configs", "bench", game + ".yaml")


def key_of(game, seed, method, setting):
    parts = [game, "s%d" % seed, method] + ["%s=%g" % (k, v) if not isinstance(v, str) else "%s=%s" % (k, v)
                                           for k, v in sorted(setting.items())]
    return "_".join(parts).replace("/", "-")


def flags(setting):
    """A setting as `difgames pg` options: {"bptt_lr": 0.01} -> ["--bptt-lr", "0.01"]."""
    return [x for k, v in setting.items() for x in ("--" + k.replace("_", "-"), str(v))]


def run(game, seed, method, setting, extra):
    """Runs one `difgames pg` (cached); returns (eval rows, summary)."""
    path = os.path.join(args.workdir, key_of(game, seed, method, setting) + ".jsonl")
    if args.fresh or not os.path.exists(path):
        cmd = [args.difgames, "pg", "--config", config(game), "--seed", str(seed), "--quiet", "--threads", "1"]
        cmd += flags(setting) + extra
        t0 = time.time()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        with open(path + ".tmp", "w") as f:
            f.write(out)
        os.replace(path + ".tmp", path)
        print("  %-70s %7.1fs" % (os.path.basename(path)[:70], time.time() - t0), flush=True)
    lines = [json.loads(l) for l in open(path) if l.strip()]
    return [l for l in lines if "method" in l], lines[-1]


def steps_to(rows, method, target):
    """Env steps of the first evaluation at or below target (None: never)."""
    for r in rows:
        if r["method"] == method and r["loss"] is not None and r["loss"] <= target:
            return r["steps"]
    return None


def best(rows, method):
    ls = [r["loss"] for r in rows if r["method"] == method and r["loss"] is not None]
    return min(ls) if ls else float("nan")


def parallel(jobs):
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        return list(ex.map(lambda j: run(*j), jobs))


def load_results():
    return json.load(open(RESULTS)) if os.path.exists(RESULTS) else {}


def save_results(res):
    with open(RESULTS + ".tmp", "w") as f:
        json.dump(res, f, indent=1)
    os.replace(RESULTS + ".tmp", RESULTS)


res = load_results()

# ------------------------------------------------------------------ 1. BPTT
if "bptt" in STAGES:
    print("BPTT at the defaults", flush=True)
    for game in GAMES:
        outs = parallel([(game, s, "bptt", {}, ["--bptt-only"]) for s in SEEDS])
        finals = [o[1]["bptt"]["final_loss"] for o in outs]
        g = res.setdefault(game, {})
        g["bptt_final"] = finals
        g["bptt_steps"] = outs[0][1]["bptt"]["env_steps"]
        g["bptt_epochs"] = outs[0][1]["bptt"]["epochs"]
        g["bptt_batch"] = outs[0][1]["bptt"]["batch"]
        g["target"] = 1.1 * max(finals)
        print("  %s: final losses %s, target %.6g" % (game, finals, g["target"]), flush=True)
    save_results(res)

# ------------------------------------------------------------------ 2. tuning
SETTLE = 3  # the robustness criterion: this many evaluations in a row at or below the target


def settled(rows, method, target, k=SETTLE):
    """Env steps of the first of k evaluations in a row at or below target (None: never)."""
    ev = [r for r in rows if r["method"] == method]
    for i in range(len(ev) - k + 1):
        if all(ev[j]["loss"] is not None and ev[j]["loss"] <= target for j in range(i, i + k)):
            return ev[i]["steps"]
    return None


def pg_run(game, seed, setting, cap):
    """A policy-gradient run: until SETTLE evaluations in a row are at or below the game's target
    (so that both criteria can be read from it), or cap env steps."""
    return run(game, seed, "pg", dict(setting, stop_after=SETTLE),
               ["--stop-below", repr(res[game]["target"]), "--max-steps", str(cap)])


def tune_rank(r):
    """Fewest steps to settle below the target, then to first reach it, then the best loss."""
    return (r["settled"] is None, r["settled"] or 0, r["first"] is None, r["first"] or 0, r["best"])


if "tune" in STAGES:
    for game in GAMES:
        g = res[game]
        T, cap = g["target"], int(TUNE[game]["cap"] * g["bptt_steps"])
        print("tuning %s on seed %d (target %.5g, cap %d env steps)" % (game, args.tune_seed, T, cap), flush=True)
        grid = TUNE[game]["pg"]
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            outs = list(ex.map(lambda st: pg_run(game, args.tune_seed, st, cap), grid))
        table = [dict(setting=st, first=steps_to(rows, "pg", T), settled=settled(rows, "pg", T),
                      best=best(rows, "pg"), seconds=summ["pg"]["seconds"], env_steps=summ["pg"]["env_steps"])
                 for st, (rows, summ) in zip(grid, outs)]
        # BPTT tuned for samples: epochs to fill the same cap (at most 20x the default epochs)
        H = g["bptt_steps"] // (g["bptt_epochs"] * g["bptt_batch"])
        bgrid = [dict(st, bptt_epochs=min(max(1, cap // (st["bptt_batch"] * H)), 20 * g["bptt_epochs"]))
                 for st in BPTT_GRID]
        bouts = parallel([(game, args.tune_seed, "bptt", st, ["--bptt-only"]) for st in bgrid])
        btable = [dict(setting=st, first=steps_to(rows, "bptt", T), settled=settled(rows, "bptt", T),
                       best=best(rows, "bptt"), seconds=summ["bptt"]["seconds"])
                  for st, (rows, summ) in zip(bgrid, bouts)]
        g["tune_pg"], g["tune_bptt"] = table, btable
        g["pg_choice"] = min(table, key=tune_rank)["setting"]
        g["bptt_choice"] = min(btable, key=tune_rank)["setting"]
        print("  chose PG %s, BPTT %s" % (g["pg_choice"], g["bptt_choice"]), flush=True)
        save_results(res)

# ------------------------------------------------------------------ 3. measure
if "measure" in STAGES:
    for game in GAMES:
        g = res[game]
        cap = int(BUDGET[game] * g["bptt_steps"])
        print("measuring %s: PG %s, seeds %s (cap %d env steps)" % (game, g["pg_choice"], SEEDS, cap), flush=True)
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            list(ex.map(lambda s: pg_run(game, s, g["pg_choice"], cap), SEEDS))
        parallel([(game, s, "bptt", g["bptt_choice"], ["--bptt-only"]) for s in SEEDS])


# ------------------------------------------------------------------ 4. report
def fmt_int(n):
    return "{:,}".format(int(n))


def fmt_steps(x):
    return "not reached" if x is None else fmt_int(x)


def median_miss_last(xs):
    """Median, a miss (None) counting as more than any step count."""
    return sorted(xs, key=lambda x: (x is None, x or 0))[len(xs) // 2]


def median_ratio(ps, bs):
    """The median over seeds of PG / BPTT ("-" unless both reached the target on every seed)."""
    if any(p is None or b is None for p, b in zip(ps, bs)):
        return "-"
    return "%.3g" % sorted(p / b for p, b in zip(ps, bs))[len(ps) // 2]


def ratio(a, b):
    return None if a is None or b is None else a / b


def setting_str(st):
    names = dict(lr="lr", log_std="log σ0", batch="episodes/iteration", bptt_batch="batch", bptt_lr="lr",
                 bptt_epochs="epochs")
    out = [st["algo"].upper() if st.get("algo") == "ppo" else "REINFORCE"] if "algo" in st else []
    for k in ("lr", "log_std", "batch", "bptt_batch", "bptt_lr", "bptt_epochs"):
        if k in st:
            out.append("%s %g" % (names[k], st[k]))
    return ", ".join(out)


def plot_str(st):
    """A setting in plain ASCII without commas (a plot legend, a CSV field)."""
    if "algo" in st:
        return "%s lr %g b%d" % (st["algo"].upper() if st["algo"] == "ppo" else "REINFORCE", st["lr"], st["batch"])
    return "batch %d lr %g" % (st["bptt_batch"], st["bptt_lr"])


# Reading of the numbers (written after the run; the ratios are filled in).
def findings(summary):
    """The reading of the numbers, as Markdown bullets (numbers filled in from this run)."""
    def ratios(game, crit):
        sm = summary[game][crit]
        m = sm["median"]
        return (fmt_pg_ratio(m["pg"], m["bptt"], summary[game]["cap"]),
                fmt_pg_ratio(m["pg"], m["bptt_tuned"], summary[game]["cap"]))
    out = []
    if "reach" in summary and "chase" in summary:
        rd, rt = ratios("reach", "first")
        cd, ct = ratios("chase", "first")
        rd3, rt3 = ratios("reach", "settled")
        cd3, ct3 = ratios("chase", "settled")
        out.append("- **Against BPTT as configured** (64 episodes an Adam step, 300 / 1500 epochs), the tuned")
        out.append("  policy-gradient baseline needed %sx BPTT's env steps on reach and %sx on chase" % (rd, cd))
        out.append("  (first reach; %s and %s with %d in a row). The 1/100 does not hold there: on" % (
            rd3, cd3, SETTLE))
        out.append("  reach, policy gradient is the *more* sample-efficient of the two, and on chase BPTT's")
        out.append("  advantage is about an order of magnitude, not two. BPTT's defaults are chosen for")
        out.append("  wall-clock time (an epoch of 64 episodes costs about a millisecond), not for samples.")
        out.append("- **Against BPTT tuned for samples** (batch and rate chosen on the held-out seed, exactly")
        out.append("  as policy gradient's settings were), policy gradient needed %sx the env steps on reach" % rt)
        out.append("  and %sx on chase (first reach). That is where a figure like 1/100 comes from: one exact" % ct)
        out.append("  gradient of a single episode (batch 1 or 4) is worth very many sampled episodes. With")
        out.append("  %d in a row the reach ratio is %s. On chase the tuned BPTT setting (%s) reaches the" % (
            SETTLE, rt3, setting_str(res["chase"]["bptt_choice"])))
        if ct3 == "-":
            out.append("  target early but does not stay there on seeds 0, 1, 2 and later diverges (the green")
            out.append("  curves), so it has no %d-in-a-row count and its first-reach ratio is optimistic." % SETTLE)
        else:
            out.append("  target early and stays after %sx policy gradient's steps." % ct3)
        out.append("- The policy-gradient winners were REINFORCE with a value baseline on reach and PPO on")
        out.append("  chase. On chase, REINFORCE reached the target first in several settings but then")
        out.append("  hovered above it (with 8 episodes an iteration at lr 1e-3 it drifted back up); PPO's")
        out.append("  clipped updates were slower but steady. On reach the tuned BPTT setting (batch 1) sits at")
        out.append("  the small-batch edge of its grid, so BPTT could go a little lower still; policy gradient's")
        out.append("  winner there (8 episodes an iteration) does not: 4 episodes an iteration was tried and")
        out.append("  needed more env steps to %d evaluations in a row (Tuning, below)." % SETTLE)
        out.append("- Policy gradient gets a rough policy quickly and spends most of its samples on the last")
        out.append("  stretch to the target, close to BPTT's converged loss, where its gradient estimate is")
        out.append("  noisiest (the orange curves flatten near the target on chase).")
        out.append("- Env steps count simulator calls, not information. A BPTT episode also yields the")
        out.append("  simulator's Jacobians (the derivative of every step with respect to state and action),")
        out.append("  which policy gradient never sees and which cost a backward pass and a differentiable")
        out.append("  simulator; so the ratios compare what each method needs from a simulator it is given, not")
        out.append("  two methods on the same information.")
    return "\n".join(out)



METHOD = """\
## Method

- **Same engine, same policy.** Policy gradient (`difgames pg`, `src/solver/pg.c`,
  `include/difgames/pg.h`) uses the game's tanh MLP (`net.*`, 64x64) as the mean mu(s) in
  [-1, 1] of a Gaussian with a learned, state-independent log sigma (`log_std`). The game gets
  clip(mu + sigma eps, -1, 1); the log-probability is that of the unclipped Gaussian sample
  (Stable-Baselines3's treatment of bounded actions). For a seed both methods start from the
  same initial policy (the BPTT trainer's initialisation).
- **No gradients through the game.** Rollouts step the game on plain data (each step's tensors
  are built from floats); the reward of a step is -(weighted step cost) of that episode alone
  (the game's own `step_cost`, evaluated on a batch of that one row). The baseline is a value
  MLP (`value.*`, obs and t/H in, linear output, targets scaled by the first batch's return
  mean and std); advantages by GAE(gamma, lambda), normalised per batch; Adam for both
  networks; the gradient of the objective (PPO's clipped surrogate, or REINFORCE's
  -mean(logp A)) comes from the tape (`dg_backward`).
- **Same loss.** Every evaluation rolls the policy's *mean* action out with `dg_rollout` on a
  fixed batch of 256 episodes (eval seed 1000003, the same for every seed and method): the
  deterministic episode loss of the benchmark tasks configs/bench/reach.yaml and chase.yaml. BPTT is the existing trainer
  (`dg_trainer_*`), evaluated from its epoch callback. Evaluations happen at env steps on a log
  grid of 40 points a decade (and after the last epoch), so step counts are resolved to ~6%.
- **Env steps.** BPTT: batch x horizon an epoch; the backward pass re-uses the forward's states
  and is counted as no extra env steps, though it uses the simulator's Jacobians, which policy
  gradient does not have. Policy gradient: episodes x horizon sampled an iteration (its update
  epochs re-use them).
- **Target.** 1.1 x the largest final evaluation loss of BPTT's three default runs (so every
  default run reaches it). Steps to the target: the first evaluation at or below it; medians
  over seeds 0, 1, 2. If a policy-gradient seed never reaches it within its budget, the
  script also reports a second target: the largest best loss of the PG seeds."""


TUNING = """\
## Tuning (held-out seed %d; what was tried)

Each policy-gradient setting ran until %d evaluations in a row were at or below the game's
target, or a cap; each BPTT setting trained for the cap's env steps (at most 20x its default
epochs). The winner: fewest env steps to %d in a row at or below the target, then to the first
reach, then the best loss. Not tuned (defaults of `difgames pg`): gamma 0.99; GAE lambda 0.95
(PPO) / 1, i.e. reward-to-go minus the value (REINFORCE); PPO clip 0.2, 10 epochs of
minibatches of 256 samples; REINFORCE one full-batch policy step an iteration; value net 10
epochs of minibatches of 256, Adam 1e-3; gradient-norm clipping 0.5 per network; log sigma
learned from its initial value.
"""
METHODS = ("bptt", "bptt_tuned", "pg")
PLOT_MAX = 20.0  # losses above this are drawn at it (diverging runs would squash the rest)
CRITERIA = (("first", "first reach", steps_to), ("settled", "%d in a row" % SETTLE, settled))


def fmt_pg_ratio(p, b, cap):
    """PG / BPTT; a lower bound when PG missed within its cap."""
    if b is None:
        return "-"
    if p is None:
        return "> %.3g" % (cap / b)
    return "%.3g" % (p / b)


if "report" in STAGES:
    csv = ["panel,series,label,color,steps,loss"]
    colors = {"bptt": ["1f77b4", "4f9bd0", "8cc0e8"], "bptt_tuned": ["2ca02c", "5cbf5c", "98df8a"],
              "pg": ["ff7f0e", "d95f02", "fdae6b"]}
    summary = {}
    for game in GAMES:
        g = res[game]
        T, cap = g["target"], int(BUDGET[game] * g["bptt_steps"])
        runs = {s: pg_run(game, s, g["pg_choice"], cap) for s in SEEDS}
        curves = {s: {"bptt": run(game, s, "bptt", {}, ["--bptt-only"])[0],
                      "bptt_tuned": run(game, s, "bptt", g["bptt_choice"], ["--bptt-only"])[0],
                      "pg": runs[s][0]} for s in SEEDS}
        sm = dict(target=T, cap=cap)
        for crit, _, fn in CRITERIA:
            per = {m: [fn(curves[s][m], "pg" if m == "pg" else "bptt", T) for s in SEEDS] for m in METHODS}
            sm[crit] = dict(per=per, median={m: median_miss_last(per[m]) for m in METHODS})
        sm["pg_best"] = [best(curves[s]["pg"], "pg") for s in SEEDS]
        sm["pg_steps"] = [runs[s][1]["pg"]["env_steps"] for s in SEEDS]
        sm["pg_seconds"] = [runs[s][1]["pg"]["seconds"] for s in SEEDS]
        sm["T2"] = None
        if any(x is None for x in sm["first"]["per"]["pg"]):  # a second target every PG seed reached
            T2 = max(sm["pg_best"])
            sm["T2"] = dict(target=T2, bptt=[steps_to(curves[s]["bptt"], "bptt", T2) for s in SEEDS],
                            pg=[steps_to(curves[s]["pg"], "pg", T2) for s in SEEDS])
        summary[game] = sm
        labels = {"bptt": "BPTT (defaults: batch %d lr %g)" % (g["bptt_batch"], DEFAULT_LR[game]),
                  "bptt_tuned": "BPTT (%s)" % plot_str(g["bptt_choice"]),
                  "pg": "PG (%s)" % plot_str(g["pg_choice"])}
        xs = []
        for s in SEEDS:
            for m in METHODS:
                for r in curves[s][m]:
                    if r["steps"] > 0:
                        xs.append(r["steps"])
                    csv.append("%s,%s%d,%s,%s,%d,%.9g" % (game, m, s, labels[m] if s == SEEDS[0] else "",
                                                          colors[m][SEEDS.index(s) % 3], r["steps"],
                                                          min(r["loss"], PLOT_MAX)))
        csv.append("%s,target,target loss %.4g,000000,%d,%.9g" % (game, T, min(xs), T))
        csv.append("%s,target,target loss %.4g,000000,%d,%.9g" % (game, T, max(xs), T))
    csv_path = os.path.join(args.workdir, "curves.csv")
    with open(csv_path, "w") as f:
        f.write("\n".join(csv) + "\n")
    subprocess.run([args.difgames, "pg", "--plot", csv_path, "--png", args.png,
                    "--title", "eval loss vs env steps, seeds 0 1 2"], check=True)

    cpu = "unknown CPU"
    try:
        for l in open("/proc/cpuinfo"):
            if l.startswith("model name"):
                cpu = l.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    md = []
    W = md.append
    W("# Sample efficiency: BPTT against policy gradient")
    W("")
    W("A common claim is that the differentiable approach (BPTT) needs about 1/100 of the")
    W("environment samples of policy gradient. Both methods below train the same tanh MLP policy on")
    W("the same games in the same engine and are measured by the same number: the deterministic")
    W("BPTT episode loss on one fixed evaluation batch. The games are the benchmark tasks")
    W("`configs/bench/reach.yaml` and `configs/bench/chase.yaml` (docs/games/), and \"BPTT defaults\"")
    W("are theirs. This file and `sample_efficiency.png` are written by `bench/sample_efficiency.py`;")
    W("the numbers are from one run of it. Terms (BPTT, env steps, policy gradient) are those of")
    W("[notation.md](notation.md).")
    W("")
    W("## Result")
    W("")
    W("Median env steps (seeds 0, 1, 2) to reach the target loss; ratio = policy gradient / BPTT, taken")
    W("of the medians (median PG steps / median BPTT steps). That is not the median of the per-seed")
    W("ratios; *Per seed* below gives both.")
    W("*first reach*: the first evaluation at or below the target;")
    W("*%d in a row*: the first of %d evaluations in a row at or below it (a curve that dips under the" % (SETTLE, SETTLE))
    W("target once by noise does not count).")
    W("")
    W("| game | target loss | criterion | BPTT defaults | BPTT tuned for samples | policy gradient (tuned) |"
      " PG / BPTT defaults | PG / BPTT tuned |")
    W("|---|---|---|---|---|---|---|---|")
    for game in GAMES:
        sm = summary[game]
        for crit, name, _ in CRITERIA:
            md_ = sm[crit]["median"]
            W("| %s | %.4g | %s | %s | %s | %s | **%s** | **%s** |" % (
                game, sm["target"], name, fmt_steps(md_["bptt"]), fmt_steps(md_["bptt_tuned"]),
                fmt_steps(md_["pg"]) if md_["pg"] is not None else "> %s (budget)" % fmt_int(sm["cap"]),
                fmt_pg_ratio(md_["pg"], md_["bptt"], sm["cap"]),
                fmt_pg_ratio(md_["pg"], md_["bptt_tuned"], sm["cap"])))
    W("")
    W("![evaluation loss against environment steps, both methods, 3 seeds each](sample_efficiency.png)")
    W("")
    W("x: log10 of env steps; y: evaluation loss, log scale. Blue: BPTT at the config's defaults;")
    W("green: BPTT with the batch and rate tuned for samples; orange: the tuned policy-gradient")
    W("baseline (stopped once %d evaluations in a row were at or below the target, or at its budget);" % SETTLE)
    W("black: the target. Losses above %g are drawn at %g (the tuned BPTT setting on chase diverges" % (PLOT_MAX, PLOT_MAX))
    W("after reaching the target).")
    W("")
    W("## What it says")
    W("")
    W(findings(summary))
    W("")
    W("## Per seed")
    W("")
    for game in GAMES:
        g, sm = res[game], summary[game]
        W("### %s: target %.5g (1.1 x the worst BPTT-default final loss: %s)" % (
            game, sm["target"], ", ".join("%.4g" % x for x in g["bptt_final"])))
        W("")
        W("BPTT defaults: %d epochs of %d episodes, lr %g (%s env steps). BPTT tuned: %s. Policy gradient:"
          " %s, budget %gx BPTT's default env steps (%s)." % (
              g["bptt_epochs"], g["bptt_batch"], DEFAULT_LR[game], fmt_int(g["bptt_steps"]),
              setting_str(g["bptt_choice"]), setting_str(g["pg_choice"]), BUDGET[game], fmt_int(sm["cap"])))
        W("")
        W("Each **median** row takes the median of each column's steps, and its ratios are those of")
        W("the medians; the row under it is the median of the per-seed ratios.")
        W("")
        W("| seed | criterion | BPTT defaults | BPTT tuned | policy gradient | PG / BPTT defaults |"
          " PG / BPTT tuned |")
        W("|---|---|---|---|---|---|---|")
        for crit, name, _ in CRITERIA:
            per, med = sm[crit]["per"], sm[crit]["median"]
            for i, s in enumerate(SEEDS):
                b, b2, p = per["bptt"][i], per["bptt_tuned"][i], per["pg"][i]
                W("| %d | %s | %s | %s | %s | %s | %s |" % (s, name, fmt_steps(b), fmt_steps(b2), fmt_steps(p),
                                                          fmt_pg_ratio(p, b, sm["cap"]), fmt_pg_ratio(p, b2, sm["cap"])))
            W("| **median** | %s | **%s** | **%s** | **%s** | **%s** | **%s** |" % (
                name, fmt_steps(med["bptt"]), fmt_steps(med["bptt_tuned"]), fmt_steps(med["pg"]),
                fmt_pg_ratio(med["pg"], med["bptt"], sm["cap"]), fmt_pg_ratio(med["pg"], med["bptt_tuned"], sm["cap"])))
            W("| median of the ratios | %s | | | | %s | %s |" % (
                name, median_ratio(per["pg"], per["bptt"]), median_ratio(per["pg"], per["bptt_tuned"])))
        W("")
        W("Policy gradient per seed: best evaluation loss %s; env steps run %s; seconds %s." % (
            ", ".join("%.4g" % x for x in sm["pg_best"]), ", ".join(fmt_int(x) for x in sm["pg_steps"]),
            ", ".join("%.0f" % x for x in sm["pg_seconds"])))
        if sm["T2"]:
            t2 = sm["T2"]
            W("")
            W("A policy-gradient seed never reached the target, so also the second target %.5g (the largest"
              " best loss of the PG seeds): BPTT defaults %s, policy gradient %s (seeds %s); medians %s and %s." % (
                  t2["target"], ", ".join(fmt_steps(x) for x in t2["bptt"]), ", ".join(fmt_steps(x) for x in t2["pg"]),
                  ", ".join(str(s) for s in SEEDS), fmt_steps(median_miss_last(t2["bptt"])),
                  fmt_steps(median_miss_last(t2["pg"]))))
        W("")
    W(TUNING % (args.tune_seed, SETTLE, SETTLE))
    for game in GAMES:
        g = res[game]
        W("### %s (cap %gx BPTT's default env steps = %s)" % (game, TUNE[game]["cap"],
                                                            fmt_int(TUNE[game]["cap"] * g["bptt_steps"])))
        W("")
        W("| policy gradient setting | first reach | %d in a row | best loss | env steps run | seconds |" % SETTLE)
        W("|---|---|---|---|---|---|")
        for r in sorted(g["tune_pg"], key=tune_rank):
            W("| %s | %s | %s | %.4g | %s | %.0f |" % (setting_str(r["setting"]), fmt_steps(r["first"]),
                                                      fmt_steps(r["settled"]), r["best"], fmt_int(r["env_steps"]),
                                                      r["seconds"]))
        W("")
        W("| BPTT setting | first reach | %d in a row | best loss | seconds |" % SETTLE)
        W("|---|---|---|---|---|")
        for r in sorted(g["tune_bptt"], key=tune_rank):
            W("| %s | %s | %s | %.4g | %.1f |" % (setting_str(r["setting"]), fmt_steps(r["first"]),
                                                 fmt_steps(r["settled"]), r["best"], r["seconds"]))
        W("")
    W(METHOD)
    W("")
    W("## Reproduce")
    W("")
    W("```")
    W("cmake -S . -B build -DDG_TESTS=ON && cmake --build build -j2")
    W("python3 bench/sample_efficiency.py --difgames build/difgames --jobs 2   # all four stages")
    W("# single runs (seed 0): BPTT defaults, policy gradient, BPTT tuned; each prints one JSON")
    W("# line an evaluation, then a summary")
    for game in GAMES:
        g = res[game]
        W("build/difgames pg --config configs/bench/%s.yaml --seed 0 --bptt-only" % game)
        W("build/difgames pg --config configs/bench/%s.yaml --seed 0 %s --stop-below %.6g --stop-after %d --max-steps %d" % (
            game, " ".join(flags(g["pg_choice"])),
            g["target"], SETTLE, int(BUDGET[game] * g["bptt_steps"])))
        W("build/difgames pg --config configs/bench/%s.yaml --seed 0 --bptt-only %s" % (
            game, " ".join(flags(g["bptt_choice"]))))
    W("```")
    W("")
    W("Machine: %s, %d cores, %s %s, Python %s. Each run single-threaded (`--threads 1`), %d at a"
      " time; other jobs shared the machine, so seconds are indicative only (env steps are exact)."
      " Measured %s." % (cpu, os.cpu_count() or 0, platform.system(), platform.release(),
                         platform.python_version(), args.jobs, datetime.date.today().isoformat()))
    W("")
    with open(args.md, "w") as f:
        f.write("\n".join(md))
    print(json.dumps({g: {c: summary[g][c] for c, _, _ in CRITERIA} for g in GAMES}))
