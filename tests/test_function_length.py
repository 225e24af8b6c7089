"""The end of every run names the functions past 60 lines (tests/conftest.py), as it names the
modules past about 500: a prompt to split one into named steps, never a failure."""
from code_size import long_functions


def _function(name: str, lines: int) -> str:
    return f"def {name}():\n" + "    x = 1\n" * (lines - 1)


def test_a_function_past_60_lines_is_named_with_its_place_and_length(tmp_path):
    package = tmp_path / "runtime" / "mlab"
    package.mkdir(parents=True)
    (package / "m.py").write_text(_function("fits", 60) + "\n\nclass C:\n" +
                                  "".join("    " + line + "\n" for line in _function("long", 61).splitlines()))
    (tmp_path / "compiler" / "mlabc").mkdir(parents=True)
    (tmp_path / "compiler" / "mlabc" / "n.py").write_text(_function("longer", 75))
    assert long_functions(tmp_path) == ["runtime/mlab/m.py:64 long: 61 lines", "compiler/mlabc/n.py:1 longer: 75 lines"]

