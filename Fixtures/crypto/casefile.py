"""The case files the generators here write: one JSON object a line, under a header naming the generator, its seed
and the versions of what computed the cases, and their check (`generate.py --check`), which compares the cases
only, since the versions in the header may differ from one machine to another."""

import json
import os


def render(items, keys, seed, versions):
    """The file's text: the header with `seed` and each (name, value) of `versions`, then one line a case, with
    the fields of `keys` in that order."""
    lines = ["{" + ",".join(json.dumps(k) + ":" + json.dumps(c[k]) for k in keys) + "}" for c in items]
    named = "".join(",%s:%s" % (json.dumps(name), json.dumps(value)) for name, value in versions)
    header = '{"generator":"generate.py","seed":%d%s,"cases":[\n' % (seed, named)
    text = header + ",\n".join(lines) + "\n]}\n"
    json.loads(text)
    return text


def write_or_check(directory, filename, text, count, argv, width, note=""):
    """Writes `text` to `directory/filename`, or with `--check` in `argv` compares its cases with the file's; prints
    one line (`width` wide for the name) and returns the exit status."""
    path = os.path.join(directory, filename)
    if "--check" in argv:
        try:
            with open(path, "r", encoding="ascii", newline="") as f:
                current = f.read()
        except OSError:
            current = None
        same = current is not None and current.split("\n", 1)[1] == text.split("\n", 1)[1]
        print("%-*s %5d cases %s" % (width, filename, count, "OK" if same else "DIFFERS"))
        return 0 if same else 1
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write(text)
    print("%-*s %5d cases%s %8d bytes" % (width, filename, count, note, len(text)))
    return 0
