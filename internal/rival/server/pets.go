//go:build rival

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/petstore/internal/rival/api"
)

var _ api.StrictServerInterface = (*app)(nil)

// apiKey is the context key of the API key the request was sent with.
type apiKey struct{}

// retention is how long the outcome of a keyed create is kept.
const retention = 24 * time.Hour

// The headers of the deprecated getPet, as the spec states them.
const (
	deprecation = "@1767225600"
	sunset      = "Thu, 05 Dec 2030 00:00:00 GMT"
	successor   = `; rel="successor-version"`
)

// outcome is what a keyed create answered, kept for its retries.
type outcome struct {
	request string // the NewPet, as JSON, its times in UTC
	pet     api.Pet
	at      time.Time
}

// ListPets answers a page in id order: the pets after the cursor, at most
// limit, and a next link when more follow.
func (a *app) ListPets(ctx context.Context, req api.ListPetsRequestObject) (api.ListPetsResponseObject, error) {
	limit := 20
	if req.Params.Limit != nil && a.defect != limitIgnored {
		limit = int(*req.Params.Limit)
	}
	var after int64
	if req.Params.After != nil {
		after = *req.Params.After
		if a.defect == pagesOffByOne {
			after--
		}
	}
	a.mu.Lock()
	ids := slices.Sorted(maps.Keys(a.pets))
	page := make([]api.Pet, 0, limit)
	more := false
	for _, id := range ids {
		p := a.pets[id]
		if id <= after || req.Params.Status != nil && p.Status != *req.Params.Status {
			continue
		}
		if len(page) == limit {
			more = true
			break
		}
		page = append(page, a.answer(p, true))
	}
	a.mu.Unlock()
	resp := api.ListPets200JSONResponse{Body: page}
	if more {
		q := fmt.Sprintf("after=%d&limit=%d", page[len(page)-1].Id, limit)
		if req.Params.Status != nil && a.defect != linkDropsStatus {
			q += "&status=" + string(*req.Params.Status)
		}
		link := "<" + a.base + "/pets?" + q + `>; rel="next"`
		resp.Headers.Link = &link
	}
	return resp, nil
}

// CreatePet stores the pet, or, for an Idempotency-Key this API key sent
// within the retention window, answers the first answer again (the same
// request) or 422 (another request). Creates run one at a time, so a
// retry never meets its first request in flight.
func (a *app) CreatePet(ctx context.Context, req api.CreatePetRequestObject) (api.CreatePetResponseObject, error) {
	n := *req.Body
	if a.defect != otherInstant {
		inUTC(reflect.ValueOf(&n).Elem())
	}
	request, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	key := ""
	if k := req.Params.IdempotencyKey; k != nil {
		key = strings.Trim(*k, `"`)
		if a.defect != keyNotScoped {
			key = ctx.Value(apiKey{}).(string) + "\x00" + key
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if o, ok := a.outcomes[key]; key != "" && ok && time.Since(o.at) < retention {
		if o.request != string(request) && a.defect != keyIgnoresBody {
			return api.CreatePet422JSONResponse{IdempotencyKeyReusedJSONResponse: api.IdempotencyKeyReusedJSONResponse{
				Body: api.Error{Code: api.ErrorCodeIdempotencyKeyReused, Message: "Idempotency-Key: already used for another request", Status: http.StatusUnprocessableEntity}}}, nil
		}
		if a.defect != replaysNewID {
			return a.created(o.pet, a.defect != replayUnmarked), nil
		}
	}
	var p api.Pet
	if err := json.Unmarshal(request, &p); err != nil { // NewPet's members are Pet's
		return nil, err
	}
	a.lastID++
	p.Id = a.lastID
	a.pets[p.Id] = p
	if key != "" {
		a.outcomes[key] = outcome{request: string(request), pet: p, at: time.Now()}
	}
	return a.created(p, false), nil
}

func (a *app) created(p api.Pet, replayed bool) api.CreatePetResponseObject {
	loc := a.base + "/pets/" + strconv.FormatInt(p.Id, 10)
	resp := api.CreatePet201JSONResponse{Body: a.answer(p, false)}
	resp.Headers.Location = &loc
	if replayed {
		yes := "true"
		resp.Headers.IdempotentReplayed = &yes
	}
	if a.defect == answers200 {
		return ok200{resp}
	}
	return resp
}

// GetPet answers one pet, with the headers of a deprecated operation.
func (a *app) GetPet(ctx context.Context, req api.GetPetRequestObject) (api.GetPetResponseObject, error) {
	a.mu.Lock()
	p, ok := a.pets[req.PetId]
	a.mu.Unlock()
	link := "<" + a.base + "/pets>" + successor
	if !ok {
		resp := api.GetPet404JSONResponse{Body: api.Error{Code: api.ErrorCodeNotFound, Message: "no pet has this petId", Status: http.StatusNotFound}}
		resp.Headers.Deprecation, resp.Headers.Sunset, resp.Headers.Link = deprecation, sunset, link
		return resp, nil
	}
	resp := api.GetPet200JSONResponse{Body: a.answer(p, false)}
	resp.Headers.Deprecation, resp.Headers.Sunset, resp.Headers.Link = deprecation, sunset, link
	return resp, nil
}

// inUTC sets every time.Time under v to UTC: the same instant, stored as
// a database would.
func inUTC(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			inUTC(v.Elem())
		}
	case reflect.Interface:
		if !v.IsNil() && v.CanSet() {
			e := reflect.New(v.Elem().Type()).Elem()
			e.Set(v.Elem())
			inUTC(e)
			v.Set(e)
		}
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			if v.CanSet() {
				v.Set(reflect.ValueOf(t.UTC()))
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				inUTC(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			inUTC(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			inUTC(e)
			v.SetMapIndex(k, e)
		}
	}
}
