package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// filesCmd holds the hand-written files a change needed beside the spec
// (as the drill's count found them) to what the variant may need: none
// for a change of data; for an operation, the files its code brings
// (Op.Code), each of a kind implementation allows. It prints each file
// and what it is, and fails on any other.
func filesCmd(w io.Writer, v variant, files []string) error {
	brought := map[string]bool{}
	if v.Op != nil {
		code, err := patchFiles(v.Op.Code)
		if err != nil {
			return err
		}
		for _, f := range code {
			if kindOf(f) == "" {
				return fmt.Errorf("%s touches %s, which is none of the handler, the stores and a migration", v.Op.Code, f)
			}
			brought[f] = true
		}
	}
	var beyond []string
	for _, f := range files {
		if !brought[f] {
			beyond = append(beyond, f)
			continue
		}
		fmt.Fprintf(w, "files: %s (%s)\n", f, kindOf(f))
	}
	if len(beyond) > 0 {
		return fmt.Errorf("%d hand-written file(s) beside the spec the change should not have needed: %s", len(beyond), strings.Join(beyond, " "))
	}
	return nil
}

// kindOf is what the file is to an added operation (implementation), or
// "" for a file its code should not touch. Tests are none of them.
func kindOf(file string) string {
	if strings.HasSuffix(file, "_test.go") {
		return ""
	}
	for _, k := range implementation {
		if ok, _ := filepath.Match(k.glob, file); ok {
			return k.what
		}
	}
	return ""
}

// patchFiles are the files a unified diff writes (its +++ lines), sorted.
func patchFiles(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "+++ b/"); ok {
			out = append(out, strings.TrimSpace(strings.SplitN(name, "\t", 2)[0]))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no file in the patch", file)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// deleteFlow holds deletePet, through the server, to the contract's words:
// a pet created under an Idempotency-Key (or, from state, the one deleted
// by an earlier run) is deleted, 204; then getPet is 404, listPets omits
// it, deletePet again is 404, and the create under its key is replayed as
// it was (201, Idempotent-Replayed: true) without a new pet; a new create
// gets an id above it, never its id. Run again with the same state (on
// PostgreSQL, after a restart), the pet is still gone and still replayed.
func deleteFlow(w io.Writer, c *client, v variant, state string) error {
	var k kept
	data, err := os.ReadFile(state)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &k); err != nil {
			return fmt.Errorf("%s: %w", state, err)
		}
	case errors.Is(err, os.ErrNotExist):
		if k, err = c.create(v.requiredOnly()); err != nil {
			return err
		}
		if status, _, got, err := c.do(http.MethodDelete, petPath(k.ID), "", nil); err != nil || status != http.StatusNoContent {
			return fmt.Errorf("deletePet %d: %d %s %v, want 204", k.ID, status, got, err)
		}
		data, _ := json.Marshal(k)
		if err := os.WriteFile(state, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "stores: created pet %d under a key, deleted it: 204\n", k.ID)
	default:
		return err
	}
	if err := c.gone(v, k); err != nil {
		return err
	}
	fmt.Fprintf(w, "stores: pet %d deleted: getPet 404, listPets without it, deletePet again 404, its create replayed as created, a new create a new id\n", k.ID)
	return nil
}

func petPath(id int64) string { return "/pets/" + strconv.FormatInt(id, 10) }

// gone holds the deleted pet k to what the contract says of it.
func (c *client) gone(v variant, k kept) error {
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if status, _, got, err := c.do(m, petPath(k.ID), "", nil); err != nil || status != http.StatusNotFound {
			return fmt.Errorf("%s %s of the deleted pet: %d %s %v, want 404", m, petPath(k.ID), status, got, err)
		}
	}
	status, _, got, err := c.do(http.MethodGet, "/pets?limit=1&after="+strconv.FormatInt(k.ID-1, 10), "", nil)
	var page []struct{ ID int64 }
	if err == nil {
		err = json.Unmarshal(got, &page)
	}
	if err != nil || status != http.StatusOK || len(page) > 0 && page[0].ID == k.ID {
		return fmt.Errorf("listPets after=%d: %d %s %v, want 200 without pet %d", k.ID-1, status, got, err, k.ID)
	}
	status, h, got, err := c.do(http.MethodPost, "/pets", k.Key, k.Body)
	var replayed struct{ ID int64 }
	if err == nil {
		err = json.Unmarshal(got, &replayed)
	}
	if err != nil || status != http.StatusCreated || h.Get("Idempotent-Replayed") != "true" || replayed.ID != k.ID {
		return fmt.Errorf("createPet again under the deleted pet's key: %d (Idempotent-Replayed: %q) %s %v, want 201 replaying pet %d", status, h.Get("Idempotent-Replayed"), got, err, k.ID)
	}
	fresh, err := c.create(v.requiredOnly())
	if err != nil {
		return err
	}
	if fresh.ID <= k.ID {
		return fmt.Errorf("a create after pet %d was deleted got id %d: an id is never assigned again", k.ID, fresh.ID)
	}
	return nil
}

// flows are the checks through the server of each operation a variant
// adds, by operationId.
var flows = map[string]func(w io.Writer, c *client, v variant, state string) error{
	"deletePet": deleteFlow,
}

// noop is drill blind's forgetting for an operation: a request for the
// variant's operation (a DELETE of a pet) that the server would carry out
// is answered done without being sent on. Whether it would is asked with
// a GET of the same target, headers and body, which changes nothing: a 200 is
// answered 204, no body, with the GET's headers but those of its body and
// of getPet alone; any other answer means the operation fails anyway, so
// the request goes on (it reports false) and gets the server's own answer.
// Only the meaning differs from the server's: every form stays.
func noop(v variant, target *url.URL, w http.ResponseWriter, r *http.Request) bool {
	if v.Op == nil || r.Method != v.Op.Method || !matches(v.Op.Path, r.URL.Path) {
		return false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body)) // for the server, if it goes on
	if err != nil {
		return false
	}
	probe, err := http.NewRequestWithContext(r.Context(), http.MethodGet, target.JoinPath(r.URL.EscapedPath()).String()+querySuffix(r.URL), bytes.NewReader(body))
	if err != nil {
		return false
	}
	probe.Header = r.Header.Clone()
	probe.ContentLength = r.ContentLength
	resp, err := http.DefaultClient.Do(probe)
	if err != nil {
		return false
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	for name, vs := range resp.Header {
		switch name {
		case "Content-Type", "Content-Length", "Deprecation", "Sunset", "Link":
		default:
			w.Header()[name] = vs
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

// querySuffix is "?" and u's query, or "" without one.
func querySuffix(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	return "?" + u.RawQuery
}

// matches reports whether urlPath ends in the path template tmpl, each
// {parameter} one segment.
func matches(tmpl, urlPath string) bool {
	want := strings.Split(strings.Trim(tmpl, "/"), "/")
	have := strings.Split(strings.Trim(urlPath, "/"), "/")
	if len(have) < len(want) {
		return false
	}
	have = have[len(have)-len(want):]
	for i, seg := range want {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			if have[i] == "" {
				return false
			}
		} else if have[i] != seg {
			return false
		}
	}
	return true
}

// requiredOnly is v with only the members it makes required: the pet an
// operation's flow makes needs them, and nothing else of v's.
func (v variant) requiredOnly() variant {
	out := variant{ID: v.ID, Required: v.Required, edit: v.edit}
	for _, m := range v.Members {
		if v.requires(m.Name) {
			out.Members = append(out.Members, m)
		}
	}
	return out
}
