package server

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/jsonread"
)

// bindRunBody decodes a run request's body as bindJSON does, reading a
// plain request (its members each of the type its field takes, none twice)
// in one pass with jsonReader; any other body, and any body that could not
// be read, is decoded by bindJSON's decoder, so that it gives the same
// request or the same error.
func bindRunBody(c *gin.Context, body *runBody) error {
	if noBody(c) {
		return nil
	}
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer putBodyBuffer(buf)
	buf.Reset()
	if n := c.Request.ContentLength; n > 0 && int64(buf.Cap()) < n+bytes.MinRead {
		buf.Grow(int(n) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(c.Request.Body); err != nil {
		// The decoder meets the error where it met it reading the body.
		return decodeBody(io.MultiReader(bytes.NewReader(buf.Bytes()), errReader{err}), body)
	}
	if readRunBody(buf.Bytes(), body) {
		return nil
	}
	*body = runBody{}
	return decodeBody(bytes.NewReader(buf.Bytes()), body)
}

// bodyBuffers holds buffers (*bytes.Buffer) that run request bodies were
// read into.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody is the largest body buffer kept for the next request.
const maxPooledBody = 1 << 20

func putBodyBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBody {
		bodyBuffers.Put(b)
	}
}

// errReader is a reader that fails with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// runBodyFields are the members of a run request by JSON name.
var runBodyFields = memberIndex(runBodyMembers)

// memberIndex maps the JSON names of ms (and of their nested structs) to
// their members.
func memberIndex(ms *jsonMembers) map[string]*jsonMember {
	out := make(map[string]*jsonMember, len(ms.fields))
	for i := range ms.fields {
		out[ms.fields[i].name] = &ms.fields[i]
	}
	return out
}

// readRunBody reads a plain run request into body (a zero runBody); false
// when encoding/json is to decode it (body is then to be zeroed first).
func readRunBody(data []byte, body *runBody) bool {
	r := jsonReader{jsonread.Reader{Data: data}}
	r.Space()
	if r.Pos >= len(data) || data[r.Pos] != '{' {
		return false
	}
	if !r.members(reflect.ValueOf(body).Elem(), runBodyMembers, runBodyFields) {
		return false
	}
	r.Space()
	return r.Pos == len(data)
}

// stateValuesType is the type of a run's input, decoded with exact numbers.
var stateValuesType = reflect.TypeFor[stateValues]()

// members reads a JSON object into the fields of struct v whose members
// are ms (by name in index); false when a member is not of its field's
// type, comes twice, or names a field only in another case (encoding/json
// matches names without regard to case).
func (r *jsonReader) members(v reflect.Value, ms *jsonMembers, index map[string]*jsonMember) bool {
	r.Pos++ // {
	var seen uint64
	r.Space()
	if r.Pos < len(r.Data) && r.Data[r.Pos] == '}' {
		r.Pos++
		return true
	}
	for {
		r.Space()
		if r.Pos >= len(r.Data) || r.Data[r.Pos] != '"' {
			return false
		}
		start := r.Pos
		key, plain, ok := r.StrToken()
		if !ok {
			return false
		}
		r.Space()
		if r.Pos >= len(r.Data) || r.Data[r.Pos] != ':' {
			return false
		}
		r.Pos++
		f := index[string(key)]
		if f == nil || !plain {
			name, ok := (&jsonread.Reader{Data: r.Data, Pos: start}).Str()
			if !ok {
				return false
			}
			for _, m := range ms.fields {
				if strings.EqualFold(m.name, name) {
					return false
				}
			}
			if _, ok := r.Value(); !ok {
				return false
			}
		} else {
			bit := uint64(1) << uint(f.index)
			if f.index >= 64 || seen&bit != 0 {
				return false
			}
			seen |= bit
			if !r.field(v.Field(f.index), f) {
				return false
			}
		}
		r.Space()
		if r.Pos >= len(r.Data) {
			return false
		}
		switch r.Data[r.Pos] {
		case ',':
			r.Pos++
		case '}':
			r.Pos++
			return true
		default:
			return false
		}
	}
}

// field reads a member's value into its field fv, as encoding/json decodes
// it (null leaves the field as it is).
func (r *jsonReader) field(fv reflect.Value, f *jsonMember) bool {
	r.Space()
	if r.Pos < len(r.Data) && r.Data[r.Pos] == 'n' {
		if !r.Literal("null") {
			return false
		}
		// A null input is decoded by stateValues.UnmarshalJSON: nil.
		return true
	}
	if f.nested != nil {
		if r.Pos >= len(r.Data) || r.Data[r.Pos] != '{' {
			return false
		}
		p := reflect.New(fv.Type().Elem())
		if !r.members(p.Elem(), f.nested, f.nestedIndex()) {
			return false
		}
		fv.Set(p)
		return true
	}
	if fv.Kind() == reflect.String {
		if r.Pos >= len(r.Data) || r.Data[r.Pos] != '"' {
			return false
		}
		s, ok := r.Str()
		fv.SetString(s)
		return ok
	}
	exact := fv.Type() == stateValuesType
	r.Exact = exact
	val, ok := r.Value()
	r.Exact = false
	if !ok {
		return false
	}
	switch fv.Kind() {
	case reflect.Bool:
		b, isBool := val.(bool)
		if !isBool {
			return false
		}
		fv.SetBool(b)
	case reflect.Interface:
		fv.Set(reflect.ValueOf(val))
	case reflect.Map:
		m, isMap := val.(map[string]any)
		if !isMap || fv.Type() != mapType && !exact {
			return false
		}
		fv.Set(reflect.ValueOf(m).Convert(fv.Type()))
	default:
		return false
	}
	return true
}
