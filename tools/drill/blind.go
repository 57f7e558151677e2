package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// blindCmd serves, on listen, a proxy to target that forgets the variant's
// member in every answer that carries it (forget), and its operation, which
// it answers done without sending it on (noop); or with blind false one
// that forgets nothing (a relay). The kit, run through each with the same
// seed, must fail a check through the first that it passes through the
// second: else it never judged whether the member is kept. (A proxy is no
// wire: the kit's checks of raw HTTP may fail through both alike.) It
// prints the address it listens on, then serves until SIGTERM or SIGINT.
func blindCmd(v variant, listen, target string, blind bool) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if out, changed := forget(v, body); blind && changed {
			body = out
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		}
		resp.ContentLength = int64(len(body))
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return nil
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	var h http.Handler = rp
	if blind {
		fmt.Printf("blind: %s forgets %s on its way from %s\n", ln.Addr(), v.forgotten(), target)
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !noop(v, u, w, r) {
				rp.ServeHTTP(w, r)
			}
		})
	} else {
		fmt.Printf("relay: %s relays %s\n", ln.Addr(), target)
	}
	srv := &http.Server{Handler: h}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; srv.Close() }()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// forgotten names what drill blind forgets of v: its members, its operation.
func (v variant) forgotten() string {
	var what []string
	if len(v.Members) > 0 {
		what = append(what, v.memberNames())
	}
	if v.Op != nil {
		what = append(what, v.Op.ID)
	}
	return strings.Join(what, ",")
}

// forget returns body with the variant's members forgotten in each pet it
// holds (the body, or the items of an array): left out, or for status the
// new value answered as the default. Bodies without them pass byte for
// byte, so that whatever the kit finds wrong comes of the members.
func forget(v variant, body []byte) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var doc any
	if d.Decode(&doc) != nil || d.More() {
		return body, false
	}
	changed := false
	one := func(x any) {
		p, ok := x.(map[string]any)
		if !ok {
			return
		}
		if _, isPet := p["id"]; !isPet {
			return
		}
		for _, m := range v.Members {
			got, has := p[m.Name]
			switch {
			case !has:
			case m.Name == "status":
				if want, _ := decode(m.Value); got == want {
					p["status"] = "available"
					changed = true
				}
			default:
				delete(p, m.Name)
				changed = true
			}
		}
	}
	if a, ok := doc.([]any); ok {
		for _, x := range a {
			one(x)
		}
	} else {
		one(doc)
	}
	if !changed {
		return body, false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(doc) != nil {
		return body, false
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), true
}
