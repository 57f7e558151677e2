package doctest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// copyTree copies the working tree of the git repository root into dst:
// every file git tracks, and every untracked file it does not ignore, as
// they are on disk (changes not committed included; build outputs and
// node_modules left out). .git is not copied: the copy is no checkout.
func copyTree(root, dst string) error {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	seen := map[string]bool{}
	for _, name := range bytes.Split(out, []byte{0}) {
		f := string(name)
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		if err := copyFile(filepath.Join(root, f), filepath.Join(dst, f)); err != nil {
			return err
		}
	}
	return nil
}

// copyFile copies one file, a symbolic link as a link; a file deleted from
// the working tree is skipped.
func copyFile(src, dst string) error {
	fi, err := os.Lstat(src)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case !fi.Mode().IsRegular():
		return nil // a submodule's directory, say: nothing to copy here
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
