package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/value"
)

// A kept pet: what stores created, for a later run to read and replay.
type kept struct {
	ID   int64           `json:"id"`
	Key  string          `json:"key"`
	Body json.RawMessage `json:"body"`
}

// storesCmd creates a pet with the variant's members under an
// Idempotency-Key (unless state already holds one), then reads it by
// getPet and listPets and replays its create: each answer must carry the
// members as sent. The same key with one member left out must be refused
// 422: each member is part of the request. A variant that adds an
// operation then runs its flow (flows), its state beside state.
func storesCmd(w io.Writer, v variant, base, key, state string) error {
	if key == "" {
		return errors.New("stores: no key: set PETSTORE_CONFORM_KEY")
	}
	c := &client{base: strings.TrimSuffix(base, "/"), key: key, http: &http.Client{Timeout: 10 * time.Second}}
	var k kept
	data, err := os.ReadFile(state)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &k); err != nil {
			return fmt.Errorf("%s: %w", state, err)
		}
		fmt.Fprintf(w, "stores: pet %d, kept in %s: read and replayed again\n", k.ID, state)
	case errors.Is(err, os.ErrNotExist):
		if k, err = c.create(v); err != nil {
			return err
		}
		data, _ := json.Marshal(k)
		if err := os.WriteFile(state, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "stores: created pet %d with %s: 201 as sent\n", k.ID, k.Body)
	default:
		return err
	}
	if err := c.readBack(v, k); err != nil {
		return err
	}
	refused := "422"
	if len(v.Required) > 0 {
		refused += " (400 for " + strings.Join(v.Required, ", ") + ": required)"
	}
	fmt.Fprintf(w, "stores: pet %d: getPet, listPets, the replay of its create: %s as sent; the key with each left out: %s\n", k.ID, v.memberNames(), refused)
	if v.Op == nil {
		return nil
	}
	flow := flows[v.Op.ID]
	if flow == nil {
		return fmt.Errorf("stores: no check of the operation %s", v.Op.ID)
	}
	return flow(w, c, v, state+"."+v.Op.ID)
}

type client struct {
	base, key string
	http      *http.Client
}

// do sends a request and returns the answer's status, headers and body.
func (c *client) do(method, path, idemKey string, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

func (c *client) create(v variant) (kept, error) {
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	body := map[string]any{"name": "Drill " + v.ID + " " + hex.EncodeToString(nonce[:4]), "categoryId": 7}
	for _, m := range v.Members {
		x, err := decode(m.Value)
		if err != nil {
			return kept{}, fmt.Errorf("variant %s, %s: %w", v.ID, m.Name, err)
		}
		body[m.Name] = x
	}
	k := kept{Key: "drill-" + hex.EncodeToString(nonce)}
	k.Body, _ = json.Marshal(body)
	status, _, got, err := c.do(http.MethodPost, "/pets", k.Key, k.Body)
	if err != nil {
		return k, fmt.Errorf("createPet: %w", err)
	}
	if status != http.StatusCreated {
		return k, fmt.Errorf("createPet %s: %d %s, want 201", k.Body, status, got)
	}
	pet, err := asSent(v, got)
	if err != nil {
		return k, fmt.Errorf("createPet's 201: %w", err)
	}
	k.ID = pet.id
	return k, nil
}

// readBack reads the kept pet by getPet, finds it by listPets and replays
// its create; then sends the create with each member left out in turn
// under its key.
func (c *client) readBack(v variant, k kept) error {
	status, _, got, err := c.do(http.MethodGet, "/pets/"+strconv.FormatInt(k.ID, 10), "", nil)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("%d %s, want 200", status, got)
	}
	if err == nil {
		_, err = asSent(v, got)
	}
	if err != nil {
		return fmt.Errorf("getPet %d: %w", k.ID, err)
	}

	query := "?limit=1&after=" + strconv.FormatInt(k.ID-1, 10)
	if v.Filter != "" {
		query += "&" + v.Filter
	}
	status, _, got, err = c.do(http.MethodGet, "/pets"+query, "", nil)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("%d %s, want 200", status, got)
	}
	var page []json.RawMessage
	if err == nil {
		err = json.Unmarshal(got, &page)
	}
	if err == nil && len(page) != 1 {
		err = fmt.Errorf("%d pets, want pet %d: %s", len(page), k.ID, got)
	}
	if err == nil {
		var p pet
		if p, err = asSent(v, page[0]); err == nil && p.id != k.ID {
			err = fmt.Errorf("pet %d, want %d", p.id, k.ID)
		}
	}
	if err != nil {
		return fmt.Errorf("listPets%s: %w", query, err)
	}

	status, h, got, err := c.do(http.MethodPost, "/pets", k.Key, k.Body)
	if err == nil && (status != http.StatusCreated || h.Get("Idempotent-Replayed") != "true") {
		err = fmt.Errorf("%d (Idempotent-Replayed: %q) %s, want 201 replayed", status, h.Get("Idempotent-Replayed"), got)
	}
	if err == nil {
		var p pet
		if p, err = asSent(v, got); err == nil && p.id != k.ID {
			err = fmt.Errorf("pet %d, want %d", p.id, k.ID)
		}
	}
	if err != nil {
		return fmt.Errorf("createPet again under its Idempotency-Key: %w", err)
	}

	for _, m := range v.Members {
		var without map[string]json.RawMessage
		_ = json.Unmarshal(k.Body, &without)
		delete(without, m.Name)
		body, _ := json.Marshal(without)
		status, _, got, err = c.do(http.MethodPost, "/pets", k.Key, body)
		want, why := http.StatusUnprocessableEntity, "the key's request had "+m.Name
		if v.requires(m.Name) {
			want, why = http.StatusBadRequest, m.Name+" is required"
		}
		if err == nil && status != want {
			err = fmt.Errorf("%d %s, want %d: %s", status, got, want, why)
		}
		if err != nil {
			return fmt.Errorf("createPet under the key with %s left out: %w", m.Name, err)
		}
	}
	return nil
}

type pet struct{ id int64 }

// asSent decodes a pet and holds each of its members to the variant's
// value: the same value by the contract's rules (package value: numbers
// exact, arrays in order, objects by member, a float as its float32, a
// date-time as its instant, defaults applied at every depth), each by its
// schema in the variant's spec.
func asSent(v variant, body []byte) (pet, error) {
	var schemas map[string]*openapi3.Schema
	if len(v.Members) > 0 { // an operation's flow creates a pet of no member of its own
		var err error
		if schemas, err = v.memberSchemas(); err != nil {
			return pet{}, err
		}
	}
	x, err := value.Decode(body)
	m, ok := x.(map[string]any)
	if err != nil || !ok {
		return pet{}, fmt.Errorf("not a pet: %s", body)
	}
	n, _ := m["id"].(json.Number)
	id, err := n.Int64()
	if err != nil {
		return pet{}, fmt.Errorf("no id: %s", body)
	}
	for _, mem := range v.Members {
		want, _ := value.Decode([]byte(mem.Value))
		got, ok := m[mem.Name]
		if !ok {
			return pet{id}, fmt.Errorf("pet %d without %s, sent %s: %s", id, mem.Name, mem.Value, body)
		}
		if !value.Shows(got, want, schemas[mem.Name]) {
			g, _ := json.Marshal(got)
			return pet{id}, fmt.Errorf("pet %d with %s %s, sent %s", id, mem.Name, g, mem.Value)
		}
	}
	return pet{id}, nil
}

// memberSchemas are the schemas of v's members in NewPet of openapi.yaml
// as v edits it (the spec the drill's copy serves); of the embedded spec
// as it is when it has them all already (the drill's tests, run in a copy
// the variant evolved). A variant of no member needs none.
func (v variant) memberSchemas() (map[string]*openapi3.Schema, error) {
	out := map[string]*openapi3.Schema{}
	if len(v.Members) == 0 {
		return out, nil
	}
	newPet, err := newPetSchema(gen.SpecYAML)
	if err != nil {
		return nil, err
	}
	for _, m := range v.Members {
		if newPet.Properties[m.Name] == nil {
			edited, err := v.edit(gen.SpecYAML)
			if err != nil {
				return nil, err
			}
			if newPet, err = newPetSchema(edited); err != nil {
				return nil, err
			}
			break
		}
	}
	for _, m := range v.Members {
		if p := newPet.Properties[m.Name]; p != nil {
			out[m.Name] = p.Value
		}
	}
	return out, nil
}

// newPetSchema is NewPet of the spec data.
func newPetSchema(data []byte) (*openapi3.Schema, error) {
	spec, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, err
	}
	newPet := spec.Components.Schemas["NewPet"]
	if newPet == nil || newPet.Value == nil {
		return nil, errors.New("the spec has no NewPet")
	}
	return newPet.Value, nil
}
