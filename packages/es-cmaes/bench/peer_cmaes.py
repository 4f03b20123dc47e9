"""The peer side of bench.ts: CyberAgentAILab's `cmaes` (pip: cmaes, Debian: python3-cmaes) on
the same measurements, printed as JSON. Run by bench.ts only when `import cmaes` works.

argv[1]: JSON {"seeds": [1, 2, ...]}.
"""

import json
import sys
import time

import numpy as np
import cmaes
from cmaes import CMA, SepCMA


def sphere(x):
    return float(np.dot(x, x))


def ellipsoid(x):
    n = len(x)
    scale = 10.0 ** (6.0 * np.arange(n) / (n - 1)) if n > 1 else np.ones(1)
    return float(np.dot(scale, x * x))


def rosenbrock(x):
    return float(np.sum(100.0 * (x[:-1] ** 2 - x[1:]) ** 2 + (x[:-1] - 1.0) ** 2))


FUNCTIONS = {"sphere": sphere, "ellipsoid": ellipsoid, "rosenbrock": rosenbrock}


def time_generation(kind, n, popsize):
    mean = np.full(n, 3.0)
    if kind == "separable":
        opt = SepCMA(mean=mean, sigma=2.0, seed=1, population_size=popsize)
    else:
        opt = CMA(mean=mean, sigma=2.0, seed=1, population_size=popsize)
    warmup, generations = 10, 100
    ask = tell = 0.0
    for g in range(warmup + generations):
        t0 = time.perf_counter()
        xs = [opt.ask() for _ in range(opt.population_size)]
        t1 = time.perf_counter()
        values = [ellipsoid(x) for x in xs]
        t2 = time.perf_counter()
        opt.tell(list(zip(xs, values)))
        t3 = time.perf_counter()
        if g >= warmup:
            ask += t1 - t0
            tell += t3 - t2
    return {"ask": 1000 * ask / generations, "tell": 1000 * tell / generations}


def evaluations_to_target(f, n, seed):
    opt = CMA(mean=np.full(n, 3.0), sigma=2.0, seed=seed)
    evaluations = 0
    while True:
        solutions = []
        for _ in range(opt.population_size):
            x = opt.ask()
            value = f(x)
            evaluations += 1
            if value <= 1e-8:
                return evaluations
            solutions.append((x, value))
        opt.tell(solutions)
        if opt.should_stop():
            return None


def main():
    seeds = json.loads(sys.argv[1])["seeds"]
    result = {
        "version": getattr(cmaes, "__version__", "unknown"),
        "timings": {
            "separable": time_generation("separable", 4096, 32),
            "full": time_generation("full", 200, 19),
        },
        "evaluations": {},
    }
    for name, f in FUNCTIONS.items():
        for n in (10, 20):
            result["evaluations"][f"{name}-{n}"] = [
                evaluations_to_target(f, n, seed) for seed in seeds
            ]
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
