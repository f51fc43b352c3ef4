package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// jsonMembers lists the members that encoding/json writes for a struct type:
// each exported field under its JSON name, those tagged omitempty left out
// when empty. of builds the map that decoding the struct's JSON encoding
// gives, without encoding and decoding it: a run request's kwargs are built
// for every run.
type jsonMembers struct {
	fields []jsonMember
}

type jsonMember struct {
	name      string
	index     int
	omitEmpty bool
	// nested lists the members of a *struct field (nil for other fields),
	// by name in nestedByName.
	nested       *jsonMembers
	nestedByName map[string]*jsonMember
}

// nestedIndex returns the members of a *struct field by name.
func (m *jsonMember) nestedIndex() map[string]*jsonMember { return m.nestedByName }

// runBodyMembers are the members of a run request's JSON.
var runBodyMembers = membersOf(reflect.TypeFor[runBody]())

// membersOf reads the JSON members of struct type t from its fields and tags.
func membersOf(t reflect.Type) *jsonMembers {
	ms := &jsonMembers{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			// encoding/json lifts an embedded struct's fields; none is.
			panic(fmt.Sprintf("jsonMembers: %s embeds %s", t, f.Type))
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		m := jsonMember{name: name, index: i, omitEmpty: hasOption(opts, "omitempty")}
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			m.nested = membersOf(f.Type.Elem())
			m.nestedByName = memberIndex(m.nested)
		}
		ms.fields = append(ms.fields, m)
	}
	return ms
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// of returns the members of struct value v as decoding its JSON gives them.
// Fields hold decoded JSON (strings, booleans, maps of it, any), which is
// taken as it is; a number decoded as float64 stays one (it encodes as the
// json.Number a decoding would give). A field of another kind goes through
// encoding/json.
func (ms *jsonMembers) of(v reflect.Value) (map[string]any, error) {
	out := make(map[string]any, 8)
	for _, f := range ms.fields {
		fv := v.Field(f.index)
		if f.omitEmpty && emptyJSON(fv) {
			continue
		}
		val, err := f.value(fv)
		if err != nil {
			return nil, badRequest("run request: %s: %v", f.name, err)
		}
		out[f.name] = val
	}
	return out, nil
}

// value returns field value fv as decoded JSON.
func (f jsonMember) value(fv reflect.Value) (any, error) {
	switch fv.Kind() {
	case reflect.String:
		return fv.String(), nil
	case reflect.Bool:
		return fv.Bool(), nil
	case reflect.Interface:
		if fv.IsNil() {
			return nil, nil
		}
		return fv.Interface(), nil
	case reflect.Map:
		if fv.IsNil() {
			return nil, nil
		}
		if m, ok := fv.Interface().(map[string]any); ok {
			return m, nil
		}
		if fv.Type().ConvertibleTo(mapType) {
			return fv.Convert(mapType).Interface(), nil
		}
	case reflect.Pointer:
		if fv.IsNil() {
			return nil, nil
		}
		if f.nested != nil {
			return f.nested.of(fv.Elem())
		}
	}
	b, err := json.Marshal(fv.Interface())
	if err != nil {
		return nil, err
	}
	var out any
	if err := decodeExact(b, &out); err != nil {
		return nil, fmt.Errorf("decode %s: %w", b, err)
	}
	return out, nil
}

var mapType = reflect.TypeFor[map[string]any]()

// emptyJSON reports whether omitempty leaves fv out, as encoding/json
// decides it.
func emptyJSON(fv reflect.Value) bool {
	switch fv.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return fv.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return fv.IsZero()
	}
	return false
}
