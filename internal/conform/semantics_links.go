package conform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/check"
	"github.com/petstore/petstore/internal/conform/cases"
	"github.com/petstore/petstore/internal/conform/judge"
	"github.com/petstore/petstore/internal/conform/wire"
)

// OpenAPI links (3.0, Link Object), in method_semantics: after each 2xx
// answer to a write of the phase, every link the spec gives that answer to
// a GET operation (by operationId) is followed at once, its parameters
// evaluated from the runtime expressions the spec gives them
// ($response.body#/pointer, $response.header.Name, $request.path.name,
// $request.query.name, $request.header.Name, $request.body#/pointer, $url,
// $method, $statusCode, or a constant). check.MethodSemantics judges the
// call: the linked operation answers 2xx. A link to another method, or by
// operationRef, is not followed; one whose parameters cannot be evaluated
// makes the run incomplete, naming it.

// follow follows the links of x's answer, call from of the history.
func (s *semantics) follow(ctx context.Context, x *judge.Exchange, from int) error {
	r := s.r
	op := r.operation(x.Op)
	if op == nil {
		return nil
	}
	resp := answerOf(op.Op, x.Status)
	if resp == nil {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(resp.Links)) {
		lk := resp.Links[name].Value
		var to *cases.Operation
		if lk != nil && lk.OperationID != "" {
			to = r.operation(lk.OperationID)
		}
		if to == nil || to.Method != http.MethodGet {
			continue // not followed: only a GET by operationId is safe to send
		}
		target, err := r.linkTarget(lk, to, x)
		if err != nil {
			r.Incomplete(check.CheckMethodSemantics, "link "+name+" of operation "+op.ID, "not followed: "+err.Error())
			continue
		}
		if _, err := s.send(ctx, wire.Request{Method: http.MethodGet, Target: target}); err != nil {
			return err
		}
		s.calls[len(s.calls)-1].Link = &check.Link{Name: name, Operation: op.ID, From: from}
	}
	return nil
}

// answerOf is op's documented answer for status: its own, its class's
// (2XX), or the default.
func answerOf(op *openapi3.Operation, status int) *openapi3.Response {
	for _, ref := range []*openapi3.ResponseRef{op.Responses.Status(status), op.Responses.Value(strconv.Itoa(status/100) + "XX"), op.Responses.Default()} {
		if ref != nil && ref.Value != nil {
			return ref.Value
		}
	}
	return nil
}

// linkTarget is the target of the linked operation to with lk's
// parameters evaluated over x.
func (r *run) linkTarget(lk *openapi3.Link, to *cases.Operation, x *judge.Exchange) (string, error) {
	param := func(p *openapi3.Parameter) (any, bool) {
		if v, ok := lk.Parameters[p.In+"."+p.Name]; ok {
			return v, true
		}
		v, ok := lk.Parameters[p.Name]
		return v, ok
	}
	values, query := map[string]string{}, url.Values{}
	for _, p := range append(slices.Clone(to.InPath), to.Query...) {
		raw, ok := param(p)
		if !ok {
			if p.In == openapi3.ParameterInPath {
				return "", fmt.Errorf("it gives no value for the path parameter %s of %s", p.Name, to.ID)
			}
			continue
		}
		v, err := r.linkValue(raw, x)
		if err != nil {
			return "", fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		if p.In == openapi3.ParameterInPath {
			values[p.Name] = v
		} else {
			query.Set(p.Name, v)
		}
	}
	return to.Target(values, query.Encode()), nil
}

// linkValue evaluates a link parameter over x: a runtime expression, or a
// constant.
func (r *run) linkValue(raw any, x *judge.Exchange) (string, error) {
	expr, ok := raw.(string)
	if !ok {
		b, err := json.Marshal(raw)
		return string(b), err
	}
	if !strings.HasPrefix(expr, "$") {
		return expr, nil
	}
	var v string
	switch source, name, _ := strings.Cut(expr, "."); {
	case expr == "$url":
		return x.Req.URL.String(), nil
	case expr == "$method":
		return x.Req.Method, nil
	case expr == "$statusCode":
		return strconv.Itoa(x.Status), nil
	case strings.HasPrefix(expr, "$request.body"):
		return pointer(x.ReqBody, strings.TrimPrefix(expr, "$request.body"))
	case strings.HasPrefix(expr, "$response.body"):
		return pointer(x.Body, strings.TrimPrefix(expr, "$response.body"))
	case source == "$request" && strings.HasPrefix(name, "path."):
		_, params, err := r.contract.Route(x.Req)
		if err == nil {
			v = params[strings.TrimPrefix(name, "path.")]
		}
	case source == "$request" && strings.HasPrefix(name, "query."):
		v = x.Req.URL.Query().Get(strings.TrimPrefix(name, "query."))
	case source == "$request" && strings.HasPrefix(name, "header."):
		v = x.Req.Header.Get(strings.TrimPrefix(name, "header."))
	case source == "$response" && strings.HasPrefix(name, "header."):
		v = x.Header.Get(strings.TrimPrefix(name, "header."))
	default:
		return "", fmt.Errorf("%s is a runtime expression the kit does not evaluate", expr)
	}
	if v == "" {
		return "", fmt.Errorf("%s is empty in the exchange", expr)
	}
	return v, nil
}

// pointer is the value at frag (#/json/pointer, RFC 6901; "" for the
// whole) of the JSON body b, as a parameter's text: a string as itself,
// another value as JSON.
func pointer(b []byte, frag string) (string, error) {
	ptr, ok := strings.CutPrefix(frag, "#")
	if frag != "" && (!ok || ptr != "" && !strings.HasPrefix(ptr, "/")) {
		return "", fmt.Errorf("%q is no JSON pointer", frag)
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", errors.New("the body is not JSON")
	}
	if ptr != "" {
		for _, tok := range strings.Split(ptr[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch c := v.(type) {
			case map[string]any:
				if v, ok = c[tok]; !ok {
					return "", fmt.Errorf("the body has nothing at %s", ptr)
				}
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(c) {
					return "", fmt.Errorf("the body has nothing at %s", ptr)
				}
				v = c[i]
			default:
				return "", fmt.Errorf("the body has nothing at %s", ptr)
			}
		}
	}
	if str, ok := v.(string); ok {
		return str, nil
	}
	out, err := json.Marshal(v)
	return string(out), err
}
