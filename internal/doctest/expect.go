package doctest

import (
	"fmt"
	"regexp"
	"strings"
)

// Expect checks a block's output against the lines of the block that start
// with "#> ": each must match a line of the output, in order, other output
// lines between them allowed (so a block may show only the lines that
// matter: a status line, one header, a body). In an expected line
//
//	…        matches any text, empty included (dates, messages one need not spell out)
//	<name>   matches a token of A-Z a-z 0-9 and _ . : + / = - (an id, a key,
//	         a request id), and every later <name> of the block the same token
//
// Trailing white space and carriage returns are ignored on both sides.
func Expect(block, output string) error {
	var want []string
	for l := range strings.Lines(block) {
		l = strings.TrimRight(strings.TrimLeft(l, " \t"), " \t\r\n")
		if l == "#>" {
			want = append(want, "")
		} else if w, ok := strings.CutPrefix(l, "#> "); ok {
			want = append(want, w)
		}
	}
	got := strings.Split(output, "\n")
	for i, g := range got {
		got[i] = strings.TrimRight(g, " \t\r")
	}
	bound := map[string]string{}
	at := 0
	for _, w := range want {
		found := false
		for ; at < len(got); at++ {
			if matchLine(w, got[at], bound) {
				found = true
				at++
				break
			}
		}
		if !found {
			return fmt.Errorf("expected output line not found (in order):\n  #> %s", w)
		}
	}
	return nil
}

var placeholder = regexp.MustCompile(`<([a-z][a-z0-9-]*)>|…`)

const tokenRE = `[A-Za-z0-9_.:+/=-]+`

// matchLine reports whether got matches the expected line want; it binds
// the placeholders want names for the first time.
func matchLine(want, got string, bound map[string]string) bool {
	var re strings.Builder
	re.WriteString("^")
	var names []string
	last := 0
	for _, m := range placeholder.FindAllStringSubmatchIndex(want, -1) {
		re.WriteString(regexp.QuoteMeta(want[last:m[0]]))
		last = m[1]
		if m[2] < 0 { // …
			re.WriteString(".*")
			continue
		}
		name := want[m[2]:m[3]]
		if v, ok := bound[name]; ok {
			re.WriteString(regexp.QuoteMeta(v))
			continue
		}
		re.WriteString("(" + tokenRE + ")")
		names = append(names, name)
	}
	re.WriteString(regexp.QuoteMeta(want[last:]))
	re.WriteString("$")
	sub := regexp.MustCompile(re.String()).FindStringSubmatch(got)
	if sub == nil {
		return false
	}
	// A name used twice on one line for the first time must match alike.
	seen := map[string]string{}
	for i, n := range names {
		if v, ok := seen[n]; ok && v != sub[i+1] {
			return false
		}
		seen[n] = sub[i+1]
	}
	for n, v := range seen {
		bound[n] = v
	}
	return true
}
