package strict

import (
	"mime"
	"strings"
)

// MsgJSONType is the refusal of a Content-Type that is not JSON.
const MsgJSONType = "Content-Type: must be application/json"

// JSONContentType holds the Content-Type of a JSON body, the values of its
// header, to the letter: one header, one media type, application/json in
// any case, and no parameter but a charset of utf-8 (in any case, quoted or
// not: RFC 9110 makes them equivalent). A validator may read only the first
// of two headers, ignore a charset (and so take latin1 bytes for UTF-8
// text) and any other parameter. Parameters in RFC 2231's extended form
// (name*=…, name*0=…), which HTTP does not have and mime.ParseMediaType
// decodes or drops, are refused.
func JSONContentType(values []string) error {
	switch {
	case len(values) == 0:
		return refuse(MsgJSONType)
	case len(values) > 1:
		return refuse("Content-Type: must be given once")
	case values[0] == "application/json":
		return nil
	}
	v := values[0]
	mt, params, err := mime.ParseMediaType(v)
	if err != nil || mt != "application/json" {
		return refuse(MsgJSONType)
	}
	for name, value := range params {
		if name != "charset" {
			return unknownParameter(name)
		}
		if !strings.EqualFold(value, "utf-8") {
			return refuse("Content-Type: charset must be utf-8, not %.32q", value)
		}
	}
	_, rest, _ := strings.Cut(v, ";")
	for p := range strings.SplitSeq(rest, ";") {
		if name, _, _ := strings.Cut(p, "="); strings.Contains(name, "*") {
			return unknownParameter(strings.ToLower(strings.TrimSpace(name)))
		}
	}
	return nil
}

func unknownParameter(name string) *Error {
	return refuse("Content-Type: %.64q: unknown parameter; application/json takes only charset=utf-8", name)
}
