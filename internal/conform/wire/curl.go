package wire

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// NearKey notes key, a near miss of the kit's key sent in a case, and the
// shell expression that writes it: Curl shows it so.
func (c *Client[X]) NearKey(key, shell string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nearKeys == nil {
		c.nearKeys = map[string]string{}
	}
	c.nearKeys[key] = shell
}

// Curl is a command that sends the request of x again, the keys shown as
// $PETSTORE_KEY and $PETSTORE_KEY2.
func (c *Client[X]) Curl(x *Exchange) string {
	var b strings.Builder
	b.WriteString("curl -i -X ")
	b.WriteString(x.Req.Method)
	b.WriteString(" " + shellArg(x.Req.URL.String()))
	if x.Raw != nil {
		b.WriteString(c.curlWire(x))
	}
	names := make([]string, 0, len(x.Req.Header))
	for name := range x.Req.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if x.Raw != nil && x.Raw.Writes(name) {
			continue // curlWire writes it as it went
		}
		for _, v := range x.Req.Header[name] {
			if masked, ok := c.maskKey(name, v); ok {
				b.WriteString(` -H "` + name + `: ` + masked + `"`)
				continue
			}
			b.WriteString(" -H " + shellArg(name+": "+v))
		}
	}
	if x.Req.Header.Get("Content-Type") == "" && len(x.ReqBody) > 0 {
		// curl would add its own form Content-Type.
		b.WriteString(" -H 'Content-Type:'")
	}
	if len(x.ReqBody) > 0 {
		b.WriteString(" --data-binary " + curlData(x.ReqBody))
	}
	return b.String()
}

// curlWire is what curl needs to write a request as the kit wrote it byte
// for byte: the request-target as is, HTTP/1.0, no Host, the wire's own
// lines, and none of curl's own User-Agent and Accept (a head's size is
// exact).
func (c *Client[X]) curlWire(x *Exchange) string {
	w := x.Raw
	var b strings.Builder
	switch target := c.cfg.Base.Path + w.Target; {
	case w.Scheme != "" && w.Target == "":
		b.WriteString(" --request-target " + shellQuote(w.Scheme+"://"+c.cfg.Base.Host+x.Req.URL.RequestURI()))
	case w.Scheme != "":
		b.WriteString(" --request-target " + shellQuote(w.Scheme+"://"+c.cfg.Base.Host+target))
	case w.Target != "":
		b.WriteString(" --request-target " + shellQuote(target))
	}
	if w.Proto == "HTTP/1.0" {
		b.WriteString(" --http1.0")
	}
	if w.NoHost {
		b.WriteString(" -H 'Host:'")
	}
	for _, name := range []string{"User-Agent", "Accept"} {
		if len(x.Req.Header.Values(name)) == 0 {
			b.WriteString(" -H '" + name + ":'")
		}
	}
	for _, f := range w.Fields {
		name, value, _ := strings.Cut(f, ":")
		if masked, ok := c.maskKey(http.CanonicalHeaderKey(name), value); ok {
			b.WriteString(` -H "` + name + `:` + masked + `"`)
			continue
		}
		b.WriteString(" -H " + shellQuote(f))
	}
	return b.String()
}

// maskKey shows a key of the run in an Authorization value as the variable
// that holds it.
func (c *Client[X]) maskKey(name, v string) (string, bool) {
	if name != "Authorization" {
		return "", false
	}
	if f := strings.Fields(v); len(f) > 0 {
		c.mu.Lock()
		shell, near := c.nearKeys[f[len(f)-1]]
		c.mu.Unlock()
		if near {
			return strings.TrimSuffix(v, f[len(f)-1]) + shell, true
		}
	}
	for _, k := range []struct{ key, env string }{{c.cfg.Key2, "$PETSTORE_KEY2"}, {c.cfg.Key, "$PETSTORE_KEY"}} {
		if k.key != "" && strings.Contains(v, k.key) {
			return strings.ReplaceAll(v, k.key, k.env), true
		}
	}
	return "", false
}

// curlData is curl's --data-binary argument for body: the body quoted, or,
// for a body padded with many spaces (the size cases), a process
// substitution that writes them (bash, zsh).
func curlData(body []byte) string {
	trimmed := bytes.TrimRight(body, " ")
	if pad := len(body) - len(trimmed); pad >= 256 {
		return fmt.Sprintf(`@<(printf %%s %s; printf "%%%ds" "")`, shellQuote(string(trimmed)), pad)
	}
	return shellQuote(string(body))
}

// shellArg is s as one shell word: quoted, a run of 1 024 or more of one
// letter or digit (a padded head) written as the command that prints it.
func shellArg(s string) string {
	const long = 1024
	var b strings.Builder
	start := 0
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if c := s[i]; j-i >= long && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			if start < i {
				b.WriteString(shellQuote(s[start:i]))
			}
			fmt.Fprintf(&b, `"$(head -c %d /dev/zero | tr '\0' %c)"`, j-i, c)
			start = j
		}
		i = j
	}
	if start == 0 {
		return shellQuote(s)
	}
	if start < len(s) {
		b.WriteString(shellQuote(s[start:]))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell; bytes that are not printable UTF-8
// are written as $'\xHH' (bash, zsh).
func shellQuote(s string) string {
	printable := utf8.ValidString(s)
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			printable = false
		}
	}
	if printable {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("'")
	return b.String()
}
