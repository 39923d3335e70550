"""Array-API consumers that stopped at sorting, sets and masks (issue 16) or at linalg (issue 17),
run on lazyarr arrays and compared with the same calls on NumPy arrays: scikit-learn with
array_api_dispatch, SciPy's stats and array-api-extra. (Ridge's cholesky solver is not here:
scikit-learn's dispatch itself allows only solver='svd'.) The cases of each library run in a
subprocess, since SCIPY_ARRAY_API=1 (which scikit-learn's dispatch needs too) must be set before
SciPy is first imported: one subprocess runs them all (each starting Python, the library and the
device again cost most of the time, on OpenCL ~2 s a case), and reports each case's outcome; the
pytest workers share it (the first to need a library's outcomes runs it, the others read them)."""
import fcntl
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("sklearn", "scipy", "array_api_extra")),
                                reason="needs scikit-learn, SciPy and array-api-extra")

PRELUDE = """
import numpy as np, lazyarr as xp
rng = np.random.default_rng(0)
X = rng.standard_normal((50, 4))
y = (X[:, 0] > 0).astype(np.int64)
yr = X @ np.arange(4.0)

def same(f, lazy=True):
    got, want = f(xp.asarray), f(np.asarray)
    if lazy and hasattr(got, "__array_namespace__"):   # the answer stays a lazyarr array
        assert type(got).__module__.startswith("lazyarr"), type(got)
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=1e-6, atol=1e-9)
"""

CASES = {
    "sklearn StandardScaler": "StandardScaler().fit_transform(A(X))",
    "sklearn MinMaxScaler": "MinMaxScaler().fit_transform(A(X))",
    "sklearn r2_score": "r2_score(A(yr), A(yr) * 0.9)",
    "sklearn accuracy_score": "accuracy_score(A(y), A(1 - y * (yr > 1)))",
    "sklearn LabelEncoder": "LabelEncoder().fit_transform(A(y * 3 + 2))",
    "sklearn LogisticRegression": "LogisticRegression().fit(A(X), A(y)).coef_",
    # signs of components are arbitrary: compared by magnitude
    "sklearn PCA full": "abs(PCA(n_components=2, svd_solver='full').fit_transform(A(X)))",
    "sklearn PCA covariance_eigh": "abs(PCA(n_components=2, svd_solver='covariance_eigh').fit_transform(A(X)))",
    "sklearn Ridge": "Ridge(solver='svd', alpha=0.5).fit(A(X), A(yr)).coef_",
    "sklearn LinearDiscriminantAnalysis": "abs(LinearDiscriminantAnalysis().fit(A(X), A(y)).transform(A(X)))",
    # (solver='eigen' is outside scikit-learn's dispatch, which takes LDA with solver='svd' only: its
    # np.zeros accumulator meets np.cov's lazyarr result, and SciPy refuses the mix of namespaces)
    "sklearn euclidean_distances": "euclidean_distances(A(X))",
    "sklearn pairwise_distances": "pairwise_distances(A(X), metric='manhattan')",
    "sklearn cosine_similarity": "cosine_similarity(A(X))",
    "sklearn rbf_kernel": "rbf_kernel(A(X))",
    # KMeans takes no part in scikit-learn's dispatch: it converts its input with np.asarray
    "sklearn-converting KMeans": "np.sort(KMeans(2, n_init=1, random_state=0).fit(A(X)).cluster_centers_, axis=0)",
    "scipy pearsonr": "ss.pearsonr(A(yr), A(X[:, 1])).statistic",
    "scipy describe": "ss.describe(A(yr)).skewness",
    "scipy special": "sp.erf(A(yr / 10)) + sp.gammaln(A(abs(yr) + 1)) + sp.expit(A(yr)) + sp.logsumexp(A(yr))",
    "xpx cov": "xpx.cov(A(X.T))",
    "xpx pad": "xpx.pad(A(X), 2)",
    "xpx kron": "xpx.kron(A(X[:2, :2]), A(X[:3, :3]))",
    "xpx isclose": "xpx.isclose(A(X), A(X + 1e-9))",
    "scipy zscore": "ss.zscore(A(yr))",
    "scipy trim_mean": "ss.trim_mean(A(yr), 0.1)",
    "scipy iqr": "ss.iqr(A(yr))",
    "scipy rankdata": "ss.rankdata(A(yr))",
    "scipy quantile": "ss.quantile(A(yr), 0.3)",
    "scipy ttest_ind": "ss.ttest_ind(A(yr[:25]), A(yr[25:])).statistic",
    "xpx nunique": "xpx.nunique(A(y * 2 + (yr > 0)))",
    "xpx setdiff1d": "xpx.setdiff1d(A(np.round(yr)), A([1.0, 2.0, -3.0]))",
    "xpx partition": "xpx.partition(A(yr), 3)[3]",
    "xpx at mask add": "xpx.at(A(yr))[A(yr) > 0].add(1.0)",
}
IMPORTS = {
    "sklearn": "from sklearn import config_context\n"
               "from sklearn.decomposition import PCA\n"
               "from sklearn.discriminant_analysis import LinearDiscriminantAnalysis\n"
               "from sklearn.linear_model import LogisticRegression, Ridge\n"
               "from sklearn.metrics.pairwise import cosine_similarity, euclidean_distances, pairwise_distances, "
               "rbf_kernel\n"
               "from sklearn.metrics import accuracy_score, r2_score\n"
               "from sklearn.preprocessing import LabelEncoder, MinMaxScaler, StandardScaler\n",
    "sklearn-converting": "from sklearn.cluster import KMeans\n",
    "scipy": "import scipy.stats as ss\nimport scipy.special as sp\n",
    "xpx": "import array_api_extra as xpx\n",
}


def case_code(case: str) -> str:
    """A function running `case`'s call and comparing it with NumPy's."""
    lib = case.split()[0]
    call = f"same(lambda A: {CASES[case]}, lazy={lib != 'sklearn-converting'})"
    if lib == "sklearn":
        call = f"with config_context(array_api_dispatch=True):\n    {call}"
    return "def run_case():\n" + textwrap.indent(call, "    ") + "\n"


@pytest.fixture(scope="session")
def shared_dir(tmp_path_factory, request):
    """A folder of this test session that every pytest worker sees (xdist's workers' base
    temporary folders share a parent)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if hasattr(request.config, "workerinput") else base


def shared_outcomes(lib: str, folder) -> dict[str, str]:
    """`outcomes(lib)`, run once for all workers: under a lock, read from `folder` where another
    worker wrote them."""
    path = folder / f"consumers-{lib}.json"
    with open(folder / f"consumers-{lib}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            path.write_text(json.dumps(outcomes(lib)))
        return json.loads(path.read_text())


def outcomes(lib: str) -> dict[str, str]:
    """Each case of library `lib` → "ok" or its traceback, from one subprocess running them all in turn
    (a case that fails leaves the others to run); a subprocess that dies fails each case with its stderr."""
    cases = [c for c in CASES if c.split()[0] == lib]
    runner = "import json, traceback\noutcomes = {}\n"
    for case in cases:
        runner += case_code(case) + (f"try:\n    run_case()\n    outcomes[{case!r}] = 'ok'\n"
                                     f"except BaseException:\n    outcomes[{case!r}] = traceback.format_exc()\n")
    runner += "print('OUTCOMES ' + json.dumps(outcomes))\n"
    out = subprocess.run([sys.executable, "-c", PRELUDE + IMPORTS[lib] + runner], capture_output=True, text=True,
                         timeout=1200, env={**os.environ, "SCIPY_ARRAY_API": "1"})
    line = next((x for x in out.stdout.splitlines() if x.startswith("OUTCOMES ")), None)
    if out.returncode != 0 or line is None:
        return {c: f"the subprocess exited with {out.returncode}:\n{out.stderr[-3000:]}" for c in cases}
    return json.loads(line[len("OUTCOMES "):])


@pytest.mark.parametrize("case", list(CASES))
def test_a_consumer_gives_numpys_answer_on_lazyarr_arrays(case, shared_dir):
    outcome = shared_outcomes(case.split()[0], shared_dir)[case]
    assert outcome == "ok", outcome
