"""The Bash guard's classification: which parts of a command print a file.

Pure cases (no files needed): the structure of compound commands, what takes output away
from the context, heredoc writers, path resolution, wrappers, unparsable input.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrelay.claude.guard.bash import deny_reason
from ctxrelay.hooks.guard._model import LineRange
from ctxrelay.hooks.guard.prints import classify, might_print_file

CWD = "/w/project"


def printed(command: str, cwd: str | None = CWD) -> list[tuple[str, list[str]]]:
    """(program, operand paths) of each file print in ``command``."""
    result = classify(command, cwd)
    assert result is not None, f"{command!r} did not parse"
    return [(p.program, [o.path for o in p.operands]) for p in result]


def denies(command: str) -> bool:
    return bool(printed(command))


# -- each program, alone ----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cat big.txt",
        "head big.txt",
        "head -n 5 big.txt",
        "tail big.txt",
        "tail -f big.txt",
        "sed -n '1,5p' big.txt",
        "sed -n 5p big.txt",
        'sed -n "$p" big.txt',  # the shell expands "$p": a script we cannot see
    ],
)
def test_a_lone_file_print(command: str) -> None:
    expected = [] if '"$p"' in command else [(command.split(maxsplit=1)[0], [f"{CWD}/big.txt"])]
    assert printed(command) == expected


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "git cat-file -p HEAD",
        "grep -n cat file.txt",
        "echo head tail",  # the words as arguments, not programs
        "sed -i 's/a/b/' f",
        "sed 's/a/b/' f",
        "cat",  # reads the terminal
        "cat -",
        "head -n 0 f",
        "cat /dev/null",
        "tail /proc/loadavg",
        "xargs cat < list",  # cat is an argument of xargs
        "command -v cat",
    ],
)
def test_commands_that_print_no_file(command: str) -> None:
    assert printed(command) == []


# -- compound commands --------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo hi; cat f",
        "make && cat f",
        "make || cat f",
        "true && false || cat f",
        "(cat f)",
        "{ cat f; }",
        "if test -e f; then cat f; fi",
        "if cat f; then :; fi",  # a condition's output reaches the context too
        "if false; then :; elif true; then cat f; fi",
        "if false; then :; else cat f; fi",
        "for i in 1 2; do cat f; done",
        "for ((i=0; i<2; i++)); do cat f; done",
        "while true; do cat f; break; done",
        "until false; do cat f; done",
        "case x in x) cat f;; esac",
        "f() { cat f; }; f",
        "! cat f",
        "cat f &",
        "ls | wc -l; cat f",
        "echo $(ls) && (cd . && { if true; then for i in 1; do cat f; done; fi; })",
        "echo a\ncat f\necho b",
    ],
)
def test_a_print_in_any_part_of_a_compound_command(command: str) -> None:
    assert printed(command) == [("cat", [f"{CWD}/f"])]


def test_every_print_of_a_command_is_found_in_order() -> None:
    result = printed("cat a; head b && tail c || sed -n 1p d; (cat e)")
    assert result == [
        ("cat", [f"{CWD}/a"]),
        ("head", [f"{CWD}/b"]),
        ("tail", [f"{CWD}/c"]),
        ("sed", [f"{CWD}/d"]),
        ("cat", [f"{CWD}/e"]),
    ]


# -- output that does not reach the context ---------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cat f | wc -l",
        "cat f | grep x | head -3",
        "head -n 5 f | cat -n | wc",
        "cat f |& tee /dev/null >/dev/null",
        "sed -n 1,5p f | sort",
        "(cat f) | wc",
        "{ cat f; tail g; } | wc",
        "for i in 1; do cat f; done | wc",
        "if true; then cat f; fi | wc",
        "cat f > out",
        "cat f >> out",
        "cat f >| out",
        "cat f &> out",
        "cat f &>> out",
        "cat f >& out",
        "cat f 1> out",
        "cat f > /dev/null",
        "cat f >/dev/null 2>&1",
        "cat f 2>&1 >/dev/null",  # stdout to null; stderr to the old stdout, an empty one
        "cat f >&-",
        ">out cat f",
        "{ cat f; } > out",
        "(cat f; head g) > out",
        "for i in 1; do cat f; done > out",
        "while read l; do cat f; done < list > out",
        "x=$(cat f)",
        "echo $(cat f)",
        'echo "$(head -1 f)"',
        "echo `cat f`",
        "diff <(cat f) <(cat g)",
        "tee >(cat f >/dev/null) < x > /dev/null",
        "export V=$(tail -1 f)",
        "[[ $(cat f) == x ]] && echo y",
        "cat <(sort f)",  # the operand is a pipe
        "cat f > out | wc",
    ],
)
def test_output_into_a_pipe_redirect_or_substitution_is_allowed(command: str) -> None:
    assert printed(command) == []


@pytest.mark.parametrize(
    "command",
    [
        "cat f 2>/dev/null",  # only stderr is redirected
        "cat f >&2",  # stderr is in the tool result too
        "cat f 1>&2",
        "cat f 2>&1",
        "cat f > out 1>&2",  # stdout goes where stderr goes: the tool result
        "cat f 2>/dev/null 2>&1",
        "{ cat f; } 2> err",
        "cat f | tail -n 2 other",  # tail reads its operand, not the pipe
        "ls | cat f",
    ],
)
def test_redirects_that_leave_stdout_in_the_context(command: str) -> None:
    assert denies(command)


# -- heredocs and stdin --------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cat > f <<'EOF'\nhello\nEOF\n",
        "cat <<'EOF' > f\nhello\nEOF\n",
        'cat > f <<"EOF"\n$(not run)\nEOF\n',
        "cat >> f <<EOF\nhello $USER\nEOF\n",
        "cat <<-EOF > f\n\thello\n\tEOF\n",
        "cat <<'EOF' | grep x\nhello\nEOF\n",
        "cat <<'EOF' |& grep x\nhello\nEOF\n",
        "cat <<'EOF'\nthe heredoc, not a file\nEOF\n",
        "cat <<< 'a string'",
        'sed -n 1,5p <<< "$x"',
        "python - <<'EOF'\nprint(open('f').read())  # cat head tail\nEOF\n",
    ],
)
def test_heredoc_writers_and_string_input_are_allowed(command: str) -> None:
    assert printed(command) == []


def test_a_heredoc_line_goes_on_with_the_next_statement() -> None:
    assert printed("cat > f <<'EOF' && cat f\nhello\nEOF\n") == [("cat", [f"{CWD}/f"])]
    assert printed("cat <<EOF | wc || tail g\nhello\nEOF\n") == [("tail", [f"{CWD}/g"])]


@pytest.mark.parametrize(
    "command", ["cat < f", "cat - < f", "head -3 < f", "sed -n 2p < f", "cat 0< f"]
)
def test_a_file_fed_on_stdin_is_printed(command: str) -> None:
    assert printed(command) == [(command.split(maxsplit=1)[0], [f"{CWD}/f"])]


def test_stdin_redirect_shown_with_the_command() -> None:
    result = classify("cat < f 2>/dev/null", CWD)
    assert result is not None
    assert result[0].command == "cat < f 2>/dev/null"


# -- operands and paths -------------------------------------------------------------------


def test_relative_paths_resolve_against_cwd() -> None:
    assert printed("cat a/b.txt ../c ./d /etc/e") == [
        ("cat", [f"{CWD}/a/b.txt", "/w/c", f"{CWD}/d", "/etc/e"])
    ]


def test_quotes_and_escapes_are_removed() -> None:
    assert printed('cat \'my file\' "two words" three\\ words "a\\"b"') == [
        ("cat", [f"{CWD}/my file", f"{CWD}/two words", f"{CWD}/three words", f'{CWD}/a"b'])
    ]


def test_home_is_expanded() -> None:
    home = os.path.expanduser("~")
    assert printed('cat ~/x "$HOME/y" ${HOME}/z') == [
        ("cat", [f"{home}/x", f"{home}/y", f"{home}/z"])
    ]


def test_cd_moves_the_directory_of_later_statements() -> None:
    assert printed("cd sub && cat a; cd /tmp; cat b") == [
        ("cat", [f"{CWD}/sub/a"]),
        ("cat", ["/tmp/b"]),
    ]


def test_cd_in_a_subshell_or_pipeline_stays_there() -> None:
    assert printed("(cd sub; cat a); cat b; cd x | true; cat c") == [
        ("cat", [f"{CWD}/sub/a"]),
        ("cat", [f"{CWD}/b"]),
        ("cat", [f"{CWD}/c"]),
    ]


def test_an_unknown_directory_leaves_relative_paths_as_written() -> None:
    result = classify("cd $DIR && cat a /abs", CWD)
    assert result is not None
    (a, b) = result[0].operands
    assert (a.path, a.literal) == ("a", False)
    assert (b.path, b.literal) == ("/abs", True)
    assert printed("cd && cat a") == [("cat", [os.path.expanduser("~/a")])]


def test_operands_the_shell_computes_are_kept_as_written() -> None:
    result = classify('cat "$f" $(pick) x{1,2}', CWD)
    assert result is not None
    assert [(o.path, o.literal) for o in result[0].operands] == [
        ("$f", False),
        ("$(pick)", False),
        ("x{1,2}", False),
    ]


def test_globs_are_marked_for_expansion() -> None:
    result = classify("cat *.log 'a*b'", CWD)
    assert result is not None
    assert [(o.path, o.glob) for o in result[0].operands] == [
        (f"{CWD}/*.log", True),
        (f"{CWD}/a*b", False),  # quoted: a literal star
    ]


def test_without_a_cwd_relative_paths_stay_relative() -> None:
    result = classify("cat a", None)
    assert result is not None
    assert (result[0].operands[0].path, result[0].operands[0].literal) == ("a", False)


def test_overlong_words_are_no_file() -> None:
    assert printed("cat " + "a" * 5000) == []


# -- program names and wrappers --------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "/bin/cat f",
        "\\cat f",
        '"cat" f',
        "LC_ALL=C cat f",
        "sudo cat f",
        "sudo -u root cat f",
        "env LANG=C cat f",
        "time cat f",
        "nohup cat f",
        "nice -n 5 cat f",
        "timeout 5 cat f",
        "timeout -s KILL 5s cat f",
        "command cat f",
        "exec cat f",
        "stdbuf -o L cat f",
    ],
)
def test_program_paths_quotes_and_wrappers(command: str) -> None:
    assert printed(command) == [("cat", [f"{CWD}/f"])]


# -- ranges ---------------------------------------------------------------------------------


def test_ranges_reach_the_result() -> None:
    result = classify("head -n 3 a; tail -n +4 b; sed -n '2,9p' c; head -c 10 d", CWD)
    assert result is not None
    assert [p.ranges for p in result] == [
        (LineRange(None, 3),),
        (LineRange(4, None),),
        (LineRange(2, 9),),
        (LineRange(None, 10, "byte"),),
    ]


# -- input the guard does not judge -------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cat f; if",
        "cat f )",
        "cat 'unterminated",
        "cat <<EOF; cat f\nx\nEOF\n",  # valid bash, but tree-sitter-bash misreads it
        "cat f &&",
        "cat $(ls",
    ],
)
def test_a_command_that_cannot_be_parsed_is_allowed(command: str) -> None:
    assert classify(command, CWD) is None
    assert deny_reason(command, CWD) is None


@pytest.mark.parametrize(
    "command",
    ["", "   ", "\x00cat f", "cat \udcff", "cat " + "é" * 10, "(" * 10_000 + "cat f"],
)
def test_odd_input_never_raises(command: str) -> None:
    classify(command, CWD)
    deny_reason(command, CWD)


def test_a_huge_script_is_judged_by_its_first_statements() -> None:
    result = classify("echo a; " * 30_000 + "cat f", CWD)
    assert result == ()  # the cat is past VISIT_MAX statements
    result = classify("cat f; " + "echo a; " * 30_000, CWD)
    assert result is not None
    assert len(result) == 1


# -- the pre-check --------------------------------------------------------------------------


def test_the_precheck_only_lets_through_possible_prints() -> None:
    assert not might_print_file("ls -la && git status")
    assert not might_print_file("git cat-file -p HEAD")
    assert not might_print_file("concatenate header.txt tails.sed")
    assert might_print_file("ls | head")
    assert might_print_file("/usr/bin/tail x")


def test_only_commands_that_need_parsing_load_the_parser() -> None:
    code = (
        "import sys\n"
        "from ctxrelay.claude._events.pre_tool_use import handle\n"
        "from ctxrelay.claude.guard import bash\n"
        "payload = {'tool_name': 'Bash', 'tool_input': {'command': 'ls && git st'}, 'cwd': '/'}\n"
        "assert handle(payload) is None\n"
        "assert bash.deny_reason('cat f', '/') is None  # plain: no parser needed\n"
        "assert 'tree_sitter' not in sys.modules\n"
        "assert bash.deny_reason('cat \"f\"', '/') is None  # quoted: parsed\n"
        "assert {'tree_sitter', 'tree_sitter_bash'} <= set(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


_WORDS = (
    "cat head tail sed -n -5 +3 1,5p $p f ~/x *.log ; && || | |& & ( ) { } < > >> 2> >& &> "
    "<< <<< EOF 'EOF' $( ` <( \" ' \\ $x ${HOME} 0 1 2 ² 0x1F if then fi for in do done "
    "while case esac cd sudo env X=1 = # -"
)
_PIECES = [*_WORDS.split(), " ", " ", " ", "\n"]


@given(st.lists(st.sampled_from(_PIECES), max_size=30))
@settings(max_examples=1000, deadline=None)
def test_any_mix_of_shell_tokens_is_classified_without_raising(pieces: list[str]) -> None:
    command = "".join(pieces)
    result = classify(command, CWD)
    reason = deny_reason(command, CWD)
    assert reason is None or bool(result)  # a denial is of a file print


@given(st.text(max_size=80))
@settings(max_examples=500, deadline=None)
def test_any_text_is_classified_without_raising(command: str) -> None:
    classify("cat " + command, CWD)
    deny_reason(command + " | head", CWD)


def test_characters_that_crash_tree_sitter_bash_are_hidden_from_it() -> None:
    """tree-sitter-bash reads out of bounds on "{" followed by a character of planes
    14-16 and kills the process; the parser gets a same-length stand-in instead."""
    for plane in (0xE0041, 0xF0000, 0x100000, 0x1F600):
        command = f"cat {{{chr(plane)} f{chr(plane)}.txt | head; tail {chr(plane)}.log"
        for _ in range(200):
            result = classify(command, CWD)
        assert result is not None
        assert [o.path for p in result for o in p.operands] == [f"{CWD}/{chr(plane)}.log"]


def test_a_path_with_a_nul_byte_is_no_file() -> None:
    assert printed("cat ~\x00 a\x00b; cd ~\x00 && cat x") == [("cat", ["x"])]


def test_a_loop_variable_takes_the_loops_literal_words() -> None:
    assert printed('for f in a "b c" ~/d; do cat "$f"; done') == [
        ("cat", [f"{CWD}/a", f"{CWD}/b c", os.path.expanduser("~/d")])
    ]
    assert printed("for f in a; do for g in b c; do tail $f ${g}; done; done") == [
        ("tail", [f"{CWD}/a", f"{CWD}/b", f"{CWD}/c"])
    ]


def test_a_loop_variable_the_shell_computes_stays_as_written() -> None:
    for command in ("for f; do cat $f; done", "for f in $(ls); do cat $f; done"):
        result = classify(command, CWD)
        assert result is not None
        assert [(o.path, o.literal) for o in result[0].operands] == [("$f", False)]


def test_a_loop_variable_is_bound_only_inside_its_loop() -> None:
    result = classify("for f in a; do :; done; cat $f; for f in b; do cat $f-x; done", CWD)
    assert result is not None
    assert [[o.path for o in p.operands] for p in result] == [["$f"], ["$f-x"]]
