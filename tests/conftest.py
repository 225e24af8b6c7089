"""Command-line options of the whole test suite (pytest reads them only from a root conftest)."""


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the expected files of the compiler's golden and error tests "
                          "from the current compiler output, instead of comparing with them")
