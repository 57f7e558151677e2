//go:build rival

package main

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/petstore/petstore/internal/rival/api"
)

// The defects the rival may have planted: each a plausible mistake of a
// user of oapi-codegen, which the kit must catch (rival_test.go says on
// which spec and by which check).
const (
	dropsMember     = "drops-member"      // pages built with a hand-written copy that forgets categoryId
	ignoresDefault  = "ignores-default"   // the validator's defaults switched off
	pagesOffByOne   = "pages-off-by-one"  // a page starts at the cursor, not after it
	limitIgnored    = "limit-ignored"     // every page is 20 long
	linkDropsStatus = "link-drops-status" // the next link forgets the status filter
	replaysNewID    = "replays-new-id"    // a keyed retry stores the pet again
	replayUnmarked  = "replay-unmarked"   // a replay without Idempotent-Replayed
	keyIgnoresBody  = "key-ignores-body"  // another request with a kept key is replayed, not 422
	keyNotScoped    = "key-not-scoped"    // Idempotency-Keys shared by every API key
	answers200      = "answers-200"       // a create answered 200, not 201
	wrongErrorBody  = "wrong-error-body"  // a 400's Error says not_found
	floatLossy      = "float-lossy"       // a float answered to 6 significant digits, less than float32 keeps
	otherInstant    = "other-instant"     // a date-time's wall clock answered in UTC: another instant
	refusesNull     = "refuses-null"      // a nullable member sent null refused, as if not nullable
	lenientJSON     = "lenient-json"      // a body with a member twice taken, the last one winning
)

var known = map[string]bool{}

func init() {
	for _, d := range []string{dropsMember, ignoresDefault, pagesOffByOne, limitIgnored, linkDropsStatus, replaysNewID,
		replayUnmarked, keyIgnoresBody, keyNotScoped, answers200, wrongErrorBody, floatLossy, otherInstant, refusesNull, lenientJSON} {
		known[d] = true
	}
}

// answer is the pet as the rival answers it: itself, but for a planted
// defect of answers.
func (a *app) answer(p api.Pet, page bool) api.Pet {
	switch {
	case a.defect == dropsMember && page:
		return api.Pet{Id: p.Id, Name: p.Name, Status: p.Status}
	case a.defect == floatLossy || a.defect == otherInstant:
		b, _ := json.Marshal(p)
		var q api.Pet
		json.Unmarshal(b, &q) // a deep copy
		alter(reflect.ValueOf(&q).Elem(), a.defect)
		return q
	}
	return p
}

// alter plants floatLossy or otherInstant in every float32 or time.Time
// under v.
func alter(v reflect.Value, defect string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			alter(v.Elem(), defect)
		}
	case reflect.Float32:
		if defect == floatLossy {
			f, _ := strconv.ParseFloat(strconv.FormatFloat(v.Float(), 'g', 6, 32), 32)
			v.SetFloat(f)
		}
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			if defect == otherInstant {
				_, off := t.Zone()
				v.Set(reflect.ValueOf(t.Add(time.Duration(off) * time.Second).UTC()))
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				alter(v.Field(i), defect)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			alter(v.Index(i), defect)
		}
	}
}

// ok200 answers a create 200.
type ok200 struct{ api.CreatePet201JSONResponse }

func (r ok200) VisitCreatePetResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Location", *r.Headers.Location)
	w.WriteHeader(http.StatusOK)
	return json.NewEncoder(w).Encode(r.Body)
}

// nullIn reports whether a JSON body holds a null anywhere.
func nullIn(body []byte) bool {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	return hasNull(v)
}

func hasNull(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, m := range v {
			if hasNull(m) {
				return true
			}
		}
	case []any:
		for _, m := range v {
			if hasNull(m) {
				return true
			}
		}
	}
	return false
}
