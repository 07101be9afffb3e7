"""envgen's str_replace_editor, run inside the sandbox once per call.

Usage: python3 envgen_editor.py ROOT < request.json

The request is one JSON object {"op": ..., "path": ..., ...}; the answer is one JSON object
on stdout: {"ok": true, "output": ..., "path": ...} or {"ok": false, "error": ...}. Modifying
operations also answer "previous" (the file's text before, or null when it did not exist) so
the host can undo them. Paths are confined to ROOT: absolute paths outside it, ".." segments
and symlinks anywhere on the way are refused; files are opened with O_NOFOLLOW.
Standard library only, Python 3.8+.
"""
import json
import os
import stat
import sys

SNIPPET_LINES = 4
MAX_FILE_BYTES = 2 * 1024 * 1024
LIST_DEPTH = 2


class EditorError(Exception):
    pass


def resolve(root, path):
    """The absolute path of `path` under root, and its segments below root."""
    if not isinstance(path, str) or path.strip() == "":
        raise EditorError("the path is empty: give the absolute path of a file or directory under %s" % root)
    if "\0" in path:
        raise EditorError("the path contains a NUL byte")
    if path.startswith("/"):
        if path != root and not path.startswith(root + "/"):
            raise EditorError("%s is outside the repository %s: the editor only works on files under it" % (path, root))
        relative = path[len(root):].lstrip("/")
    else:
        relative = path
    segments = [segment for segment in relative.split("/") if segment not in ("", ".")]
    if ".." in segments:
        raise EditorError("%s has a '..' segment: give a path inside %s without '..'" % (path, root))
    if ".git" in segments:
        raise EditorError("%s is inside .git: the editor does not touch git's own files" % path)
    current = root
    for index, segment in enumerate(segments):
        current = current + "/" + segment
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            break
        if stat.S_ISLNK(info.st_mode):
            raise EditorError("%s is a symlink: the editor does not follow symlinks" % "/".join([root] + segments[: index + 1]))
    return "/".join([root] + segments), segments


def kind_of(path):
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if stat.S_ISREG(info.st_mode):
        return "file"
    return "other"


def read_text(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise EditorError("%s is larger than %d bytes: view it with the terminal (sed -n)" % (path, MAX_FILE_BYTES))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise EditorError("%s is not UTF-8 text" % path)


def make_parents(root, segments):
    current = root
    for segment in segments[:-1]:
        current = current + "/" + segment
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current)
            continue
        if not stat.S_ISDIR(info.st_mode):
            raise EditorError("%s is not a directory" % current)


def write_text(path, text, create):
    flags = os.O_WRONLY | os.O_NOFOLLOW | (os.O_CREAT | os.O_EXCL if create else os.O_TRUNC)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode("utf-8"))


def numbered(text, first=1):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "\n".join("%6d\t%s" % (first + index, line) for index, line in enumerate(lines))


def list_directory(root, path):
    found = []

    def walk(directory, depth):
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            return
        for name in names:
            if name.startswith("."):
                continue
            full = directory + "/" + name
            found.append(full + ("/" if kind_of(full) == "dir" else ""))
            if depth < LIST_DEPTH and kind_of(full) == "dir":
                walk(full, depth + 1)

    walk(path, 1)
    header = "Files and directories up to %d levels deep in %s, hidden items excluded:" % (LIST_DEPTH, path)
    return "\n".join([header, path + "/"] + found)


def snippet(text, line, count):
    lines = text.split("\n")
    start = max(0, line - 1 - SNIPPET_LINES)
    end = min(len(lines), line - 1 + count + SNIPPET_LINES)
    return numbered("\n".join(lines[start:end]), start + 1)


def as_string(request, key, required=True):
    value = request.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise EditorError('%s needs "%s" as a string' % (request.get("op"), key))
    return value


def view(root, path, segments, request):
    kind = kind_of(path)
    if kind is None:
        raise EditorError("%s does not exist" % path)
    if kind == "dir":
        if request.get("view_range") is not None:
            raise EditorError("view_range is only for files; %s is a directory" % path)
        return {"output": list_directory(root, path)}
    if kind != "file":
        raise EditorError("%s is not a regular file" % path)
    text = read_text(path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    view_range = request.get("view_range")
    if view_range is None:
        return {"output": "Here is the result of running `cat -n` on %s:\n%s" % (path, numbered(text))}
    if not (isinstance(view_range, list) and len(view_range) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in view_range)):
        raise EditorError("view_range must be two integers [start, end] (end -1 for the end of the file)")
    start, end = view_range
    if start < 1 or start > max(1, len(lines)):
        raise EditorError("view_range start %d is outside the file's lines 1-%d" % (start, len(lines)))
    if end == -1:
        end = len(lines)
    if end < start or end > len(lines):
        raise EditorError("view_range end %d must be -1 or between %d and %d" % (end, start, len(lines)))
    shown = "\n".join(lines[start - 1 : end])
    return {"output": "Here is the result of running `cat -n` on %s (lines %d-%d):\n%s" % (path, start, end, numbered(shown, start))}


def create(root, path, segments, request):
    text = as_string(request, "file_text")
    if kind_of(path) is not None:
        raise EditorError("%s already exists: create never overwrites; use str_replace or insert to change it" % path)
    make_parents(root, segments)
    write_text(path, text, create=True)
    return {"output": "File created successfully at: %s" % path, "previous": None}


def existing_text(path):
    kind = kind_of(path)
    if kind is None:
        raise EditorError("%s does not exist: create it first" % path)
    if kind != "file":
        raise EditorError("%s is not a regular file" % path)
    return read_text(path)


def str_replace(root, path, segments, request):
    old = as_string(request, "old_str")
    new = as_string(request, "new_str", required=False) or ""
    if old == "":
        raise EditorError("old_str is empty: give the exact text to replace")
    text = existing_text(path)
    count = text.count(old)
    if count == 0:
        raise EditorError("no replacement was made: old_str does not appear verbatim in %s" % path)
    if count > 1:
        at = [text[: index].count("\n") + 1 for index in find_all(text, old)]
        raise EditorError("no replacement was made: old_str occurs %d times in %s (lines %s); make it unique" % (count, path, ", ".join(map(str, at))))
    index = text.index(old)
    updated = text[:index] + new + text[index + len(old) :]
    write_text(path, updated, create=False)
    line = text[:index].count("\n") + 1
    return {
        "output": "The file %s has been edited. Here is a snippet of the result:\n%s\nReview the changes and make sure they are as expected; edit the file again if necessary."
        % (path, snippet(updated, line, new.count("\n") + 1)),
        "previous": text,
    }


def find_all(text, part):
    start = text.find(part)
    while start >= 0:
        yield start
        start = text.find(part, start + 1)


def insert(root, path, segments, request):
    new = as_string(request, "new_str")
    line = request.get("insert_line")
    if not isinstance(line, int) or isinstance(line, bool):
        raise EditorError('insert needs "insert_line" as an integer (0 inserts at the top)')
    text = existing_text(path)
    lines = text.split("\n")
    trailing = lines and lines[-1] == ""
    if trailing:
        lines.pop()
    if line < 0 or line > len(lines):
        raise EditorError("insert_line %d is outside 0-%d" % (line, len(lines)))
    added = new.split("\n")
    if added and added[-1] == "" and new != "":
        added.pop()
    updated = "\n".join(lines[:line] + added + lines[line:]) + ("\n" if trailing or not lines else "")
    write_text(path, updated, create=False)
    return {
        "output": "The file %s has been edited. Here is a snippet of the result:\n%s\nReview the changes and make sure they are as expected; edit the file again if necessary."
        % (path, snippet(updated, line + 1, len(added))),
        "previous": text,
    }


def read(root, path, segments, request):
    kind = kind_of(path)
    if kind is None:
        raise EditorError("%s does not exist" % path)
    if kind != "file":
        raise EditorError("%s is not a regular file" % path)
    return {"output": read_text(path)}


def restore(root, path, segments, request):
    """Puts back a file's earlier text, or removes it when it did not exist (undo_edit)."""
    text = request.get("content")
    kind = kind_of(path)
    if kind not in (None, "file"):
        raise EditorError("%s is not a regular file" % path)
    if text is None:
        if kind == "file":
            os.unlink(path)
        return {"output": "removed"}
    make_parents(root, segments)
    write_text(path, text, create=kind is None)
    return {"output": "restored"}


def locate(root, path, segments, request):
    return {"output": kind_of(path) or "missing"}


OPS = {"locate": locate, "view": view, "create": create, "str_replace": str_replace, "insert": insert, "read": read, "restore": restore}


def main():
    root = os.path.abspath(sys.argv[1])
    try:
        request = json.loads(sys.stdin.read())
        if not isinstance(request, dict):
            raise EditorError("the request is not a JSON object")
        op = OPS.get(request.get("op"))
        if op is None:
            raise EditorError("unknown command %r" % request.get("op"))
        path, segments = resolve(root, request.get("path"))
        answer = op(root, path, segments, request)
        answer.update({"ok": True, "path": path})
    except EditorError as error:
        answer = {"ok": False, "error": str(error)}
    except OSError as error:
        answer = {"ok": False, "error": "%s: %s" % (error.filename or "", error.strerror or error)}
    except ValueError as error:
        answer = {"ok": False, "error": "bad request: %s" % error}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
