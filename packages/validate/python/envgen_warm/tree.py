"""The worktree as the tests left it: its state, what a clean run wrote into it up to a
checkpoint, and putting that back for each run that goes on from there."""

import os
import shutil

from envgen_warm.swap import _Decline


def _tree_state(root):
    """(path, size, mtime, inode, mode) of every entry under ``root``, links not followed."""
    entries = []
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            entries.append((path, info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode))
    return sorted(entries)


# A checkpoint keeps at most this much of what the clean run wrote into the tree before it.
_TREE_DELTA_LIMIT = 64 << 20


def _tree_delta(before, after):
    """What changed between two ``_tree_state``s: (paths written or replaced, paths removed)."""
    old = {entry[0]: entry[1:] for entry in before}
    new = {entry[0]: entry[1:] for entry in after}
    written = sorted(path for path, stamp in new.items() if old.get(path) != stamp)
    removed = sorted((path for path in old if path not in new), reverse=True)
    return written, removed


def _save_tree_delta(root, before, vault):
    """Copies what the run wrote into the tree since ``before`` (a ``_tree_state``) into
    ``vault``, so a forked child can put the tree back as the clean run had it here. Returns
    the delta, or a string saying why it cannot be kept."""
    import stat

    written, removed = _tree_delta(before, _tree_state(root))
    entries = []
    size = 0
    for path in written:
        info = os.lstat(path)
        rel = os.path.relpath(path, root)
        if stat.S_ISDIR(info.st_mode):
            entries.append(("dir", rel, None))
        elif stat.S_ISLNK(info.st_mode):
            entries.append(("link", rel, os.readlink(path)))
        elif stat.S_ISREG(info.st_mode):
            size += info.st_size
            if size > _TREE_DELTA_LIMIT:
                return "tests wrote more than %d MB into the tree" % (_TREE_DELTA_LIMIT >> 20)
            saved = os.path.join(vault, rel)
            os.makedirs(os.path.dirname(saved), exist_ok=True)
            shutil.copy2(path, saved, follow_symlinks=False)
            entries.append(("file", rel, saved))
        else:
            return "a test made a special file in the tree (%s)" % rel
    return {"entries": entries, "removed": [os.path.relpath(path, root) for path in removed]}


def _check_tree_delta(delta, changed):
    """Raises ``_Decline`` when a test before the checkpoint wrote one of the candidate's
    ``changed`` files (the clean run's version would hide the candidate's)."""
    touched = {rel for kind, rel, _ in delta["entries"] if kind != "dir"} | set(delta["removed"])
    for rel in changed:
        if os.path.normpath(rel) in touched:
            raise _Decline("a test before this checkpoint wrote %s" % rel)


def _restore_tree_delta(root, delta):
    """Puts back what the clean run had written into the tree at a checkpoint (the host
    restored the clean tree after the previous run)."""
    for rel in delta["removed"]:
        path = os.path.join(root, rel)
        if os.path.isdir(path) and not os.path.islink(path):
            _remove_tree(path)
        elif os.path.lexists(path):
            os.unlink(path)
    for kind, rel, value in delta["entries"]:
        path = os.path.join(root, rel)
        if kind == "dir":
            if os.path.lexists(path) and not os.path.isdir(path):
                os.unlink(path)
            os.makedirs(path, exist_ok=True)
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            _remove_tree(path)
        elif os.path.lexists(path):
            os.unlink(path)
        if kind == "link":
            os.symlink(value, path)
        else:
            shutil.copy2(value, path, follow_symlinks=False)


def _copy_entry(source, target):
    """``shutil.copytree``'s copy function for the tests' temporary directory: files as
    ``shutil.copy2`` copies them, named pipes and sockets a test left there made anew (a
    pipe's data lives only while it is open, and nothing holds it open at a checkpoint; a
    socket file outlives its listener). Other special files raise OSError."""
    import socket
    import stat

    mode = os.lstat(source).st_mode
    if stat.S_ISFIFO(mode):
        os.mkfifo(target, stat.S_IMODE(mode))
    elif stat.S_ISSOCK(mode):
        with socket.socket(socket.AF_UNIX) as made:
            made.bind(target)
        os.chmod(target, stat.S_IMODE(mode))
    else:
        shutil.copy2(source, target, follow_symlinks=False)
    return target


def _copy_scratch(source, target):
    """Makes ``target`` a copy of the tests' temporary directory ``source`` (an empty one when
    ``source`` is None), in place of what it held; returns None, or why it could not."""
    try:
        _remove_tree(target)
        if source is None:
            os.mkdir(target, 0o700)
        else:
            shutil.copytree(source, target, symlinks=True, copy_function=_copy_entry)
    except OSError as error:
        # shutil.Error holds (source, target, why) per entry that failed.
        failed = error.args[0] if isinstance(error, shutil.Error) and error.args and isinstance(error.args[0], list) else None
        return str(failed[0][2] if failed else error)
    return None


def _remove_tree(path):
    def writable(function, target, _):
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
        except OSError:
            pass
        function(target)

    if os.path.lexists(path):
        shutil.rmtree(path, onerror=writable)
