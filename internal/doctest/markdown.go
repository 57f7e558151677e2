// Package doctest keeps the project's Markdown honest: every relative link
// and anchor resolves (Links, run by make lint), and every shell block a
// reader is meant to paste runs as written (Runner, run by make test-docs).
//
// A shell block (```sh, bash, shell or console) must say what it is with an
// HTML comment on the line before it, which GitHub does not show:
//
//	<!-- doctest -->                      run it
//	<!-- doctest repo -->                 run it in the repository, not a fresh directory
//	<!-- doctest copy -->                 run it in a fresh copy of the repository's working tree
//	<!-- doctest copy timeout=6m -->      … allowed longer than the Runner's Timeout
//	<!-- doctest postgres ports=5433,8081 --> needs PostgreSQL; these ports become free ones
//	<!-- doctest serve -->                how the server the blocks below talk to starts
//	<!-- doctest skip: why -->            never run, for the reason given
//
// Lines of a block that start with "#> " are the output the reader should
// see (see Expect).
package doctest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Doc is what the checks need of one Markdown file.
type Doc struct {
	Path    string
	Anchors map[string]bool // GitHub's heading ids
	Links   []Link
	Blocks  []Block // shell blocks only
}

// Link is a link or image destination, with the line it is on.
type Link struct {
	Dest string
	Line int
}

// Block is a fenced shell block and the marker before it.
type Block struct {
	Path   string
	Line   int // the opening fence
	Lang   string
	Text   string
	Marker *Marker // nil: not marked
}

// Marker is a parsed <!-- doctest ... --> comment.
type Marker struct {
	Skip     string // the reason; non-empty means never run
	Serve    bool
	Repo     bool
	Copy     bool
	Postgres bool
	Ports    []string
	Timeout  time.Duration // 0: the Runner's
}

func (b Block) String() string { return fmt.Sprintf("%s:%d", b.Path, b.Line) }

var shells = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

// Parse reads one Markdown file (GitHub Flavored: tables and the like).
func Parse(path string, src []byte) (*Doc, error) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	root := md.Parser().Parse(text.NewReader(src))
	d := &Doc{Path: path, Anchors: map[string]bool{}}
	slugs := map[string]int{}
	lines := newLineIndex(src)
	var err error
	walkErr := ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			s := slug(plainText(n, src))
			if k := slugs[s]; k > 0 {
				d.Anchors[s+"-"+strconv.Itoa(k)] = true
			} else {
				d.Anchors[s] = true
			}
			slugs[s]++
		case *ast.Link:
			d.Links = append(d.Links, Link{Dest: string(n.Destination), Line: lines.of(nodePos(n))})
		case *ast.Image:
			d.Links = append(d.Links, Link{Dest: string(n.Destination), Line: lines.of(nodePos(n))})
		case *ast.FencedCodeBlock:
			lang := string(n.Language(src))
			if !shells[lang] {
				return ast.WalkSkipChildren, nil
			}
			b := Block{Path: path, Line: lines.of(nodePos(n)), Lang: lang, Text: string(n.Lines().Value(src))}
			if h, ok := n.PreviousSibling().(*ast.HTMLBlock); ok {
				html := string(h.Lines().Value(src))
				if h.HasClosure() {
					html += string(h.ClosureLine.Value(src))
				}
				m, ok, perr := parseMarker(html)
				if perr != nil && err == nil {
					err = fmt.Errorf("%s: %w", b, perr)
				}
				if ok {
					b.Marker = m
				}
			}
			d.Blocks = append(d.Blocks, b)
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	if walkErr != nil {
		return nil, walkErr
	}
	return d, err
}

// parseMarker reads "<!-- doctest OPTIONS -->"; ok is false for any other comment.
func parseMarker(html string) (*Marker, bool, error) {
	s := strings.TrimSpace(html)
	if !strings.HasPrefix(s, "<!--") || !strings.HasSuffix(s, "-->") {
		return nil, false, nil
	}
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, "<!--"), "-->"))
	rest, ok := strings.CutPrefix(s, "doctest")
	if !ok || (rest != "" && rest[0] != ' ' && rest[0] != ':') {
		return nil, false, nil
	}
	m := &Marker{}
	rest = strings.TrimSpace(rest)
	if r, ok := strings.CutPrefix(rest, ":"); ok {
		rest = strings.TrimSpace(r)
	}
	if reason, ok := strings.CutPrefix(rest, "skip"); ok && (reason == "" || reason[0] == ':' || reason[0] == ' ') {
		m.Skip = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(reason), ":"))
		if m.Skip == "" {
			return nil, true, fmt.Errorf("doctest skip needs a reason: <!-- doctest skip: why -->")
		}
		return m, true, nil
	}
	for _, w := range strings.Fields(rest) {
		switch {
		case w == "serve":
			m.Serve = true
		case w == "repo":
			m.Repo = true
		case w == "copy":
			m.Copy = true
		case strings.HasPrefix(w, "timeout="):
			d, err := time.ParseDuration(strings.TrimPrefix(w, "timeout="))
			if err != nil || d <= 0 {
				return nil, true, fmt.Errorf("doctest: bad timeout %q", w)
			}
			m.Timeout = d
		case w == "postgres":
			m.Postgres = true
		case strings.HasPrefix(w, "ports="):
			for p := range strings.SplitSeq(strings.TrimPrefix(w, "ports="), ",") {
				if _, err := strconv.ParseUint(p, 10, 16); err != nil || p == "" {
					return nil, true, fmt.Errorf("doctest: bad port %q", p)
				}
				m.Ports = append(m.Ports, p)
			}
		default:
			return nil, true, fmt.Errorf("doctest: unknown option %q (want repo, copy, postgres, ports=N,M, timeout=D, serve or skip: why)", w)
		}
	}
	if m.Serve && (m.Repo || m.Copy || m.Postgres || len(m.Ports) > 0 || m.Timeout > 0) {
		return nil, true, fmt.Errorf("doctest serve takes no other option")
	}
	if m.Repo && m.Copy {
		return nil, true, fmt.Errorf("doctest: repo or copy, not both")
	}
	return m, true, nil
}

// slug is GitHub's id for a heading: lower case, letters, digits, '-' and
// '_' kept, spaces to '-', everything else dropped.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// plainText is a heading's text as GitHub slugs it: code spans and
// emphasis contribute their text, markup none.
func plainText(n ast.Node, src []byte) string {
	var b bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// nodePos is the byte offset of n, or of the nearest ancestor that has one.
func nodePos(n ast.Node) int {
	for ; n != nil; n = n.Parent() {
		if p := n.Pos(); p >= 0 {
			return p
		}
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			return n.Lines().At(0).Start
		}
	}
	return 0
}

type lineIndex []int // offsets of line starts

func newLineIndex(src []byte) lineIndex {
	idx := lineIndex{0}
	for i, c := range src {
		if c == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

// of is the 1-based line of byte offset off.
func (l lineIndex) of(off int) int {
	lo, hi := 0, len(l)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if l[mid] <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1
}
