package doctest

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// MarkdownFiles lists the Markdown files of the repository at root, relative
// to it: tracked or not, but not ignored ones (node_modules), nor deleted
// ones not yet committed.
func MarkdownFiles(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.md").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var files []string
	seen := map[string]bool{}
	for f := range strings.FieldsSeq(string(out)) {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	return files, nil
}

// Problem is one thing wrong with a Markdown file.
type Problem struct {
	Path string
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Msg) }

// Check parses the Markdown files (paths relative to root) and reports every
// relative link whose file or anchor does not exist, and every shell block
// without a doctest marker. External links (with a scheme) are not followed.
func Check(root string, paths []string) ([]Problem, error) {
	docs := map[string]*Doc{}
	load := func(rel string) (*Doc, error) {
		if d, ok := docs[rel]; ok {
			return d, nil
		}
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		d, err := Parse(rel, src)
		if err != nil {
			return nil, err
		}
		docs[rel] = d
		return d, nil
	}
	var probs []Problem
	for _, rel := range paths {
		d, err := load(filepath.ToSlash(filepath.Clean(rel)))
		if err != nil {
			return nil, err
		}
		for _, b := range d.Blocks {
			if b.Marker == nil {
				probs = append(probs, Problem{d.Path, b.Line, "```" + b.Lang + " block without a marker: put <!-- doctest --> (or <!-- doctest skip: why -->, see internal/doctest) on the line before it"})
			}
		}
		for _, l := range d.Links {
			if msg := checkLink(root, d, l.Dest, load); msg != "" {
				probs = append(probs, Problem{d.Path, l.Line, msg})
			}
		}
	}
	return probs, nil
}

func checkLink(root string, d *Doc, dest string, load func(string) (*Doc, error)) string {
	u, err := url.Parse(dest)
	if err != nil {
		return fmt.Sprintf("link %q: %v", dest, err)
	}
	if u.Scheme != "" || u.Host != "" {
		return "" // external
	}
	if u.Path == "" {
		if u.Fragment != "" && !d.Anchors[u.Fragment] {
			return fmt.Sprintf("link %q: no heading with that anchor in %s", dest, d.Path)
		}
		return ""
	}
	target := filepath.Join(filepath.Dir(d.Path), filepath.FromSlash(u.Path))
	if strings.HasPrefix(u.Path, "/") {
		target = filepath.FromSlash(strings.TrimPrefix(u.Path, "/"))
	}
	target = filepath.Clean(target)
	if target == ".." || strings.HasPrefix(target, ".."+string(filepath.Separator)) {
		return fmt.Sprintf("link %q: leaves the repository", dest)
	}
	if _, err := os.Stat(filepath.Join(root, target)); err != nil {
		return fmt.Sprintf("link %q: %s does not exist", dest, filepath.ToSlash(target))
	}
	if u.Fragment == "" || !strings.HasSuffix(target, ".md") {
		return "" // anchors of other files (#L10) are the host's
	}
	td, err := load(filepath.ToSlash(target))
	if err != nil {
		return fmt.Sprintf("link %q: %v", dest, err)
	}
	if !td.Anchors[u.Fragment] {
		return fmt.Sprintf("link %q: no heading with that anchor in %s", dest, td.Path)
	}
	return ""
}
