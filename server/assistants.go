package server

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/diagram"
	"github.com/graphctl/graphctl/runtime/graph"
	"github.com/graphctl/graphctl/server/graphs"
)

func assistantObject(v *graphs.Version) map[string]any {
	ts := v.LoadedAt.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	return map[string]any{
		"assistant_id": v.Name, "graph_id": v.Name, "name": v.Name, "description": v.Graph.Spec.Description,
		"config": map[string]any{}, "context": map[string]any{},
		"metadata": map[string]any{"version": v.Graph.Spec.Version, "hash": v.ShortHash, "file": v.File},
		"version":  1, "created_at": ts, "updated_at": ts,
	}
}

type searchAssistantsBody struct {
	GraphID  string         `json:"graph_id"`
	Name     string         `json:"name"`
	Metadata map[string]any `json:"metadata"`
	paging
}

func (s *Server) searchAssistants(c *gin.Context) {
	var body searchAssistantsBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if err := body.paging.check(10); err != nil {
		s.fail(c, err)
		return
	}
	out := []map[string]any{}
	skipped := 0
	for _, v := range s.reg.List() {
		if body.GraphID != "" && body.GraphID != v.Name || body.Name != "" && !strings.Contains(v.Name, body.Name) {
			continue
		}
		a := assistantObject(v)
		if !matches(a["metadata"].(map[string]any), body.Metadata) {
			continue
		}
		if skipped < body.Offset {
			skipped++
			continue
		}
		if len(out) < body.Limit {
			out = append(out, a)
		}
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) assistant(c *gin.Context) (*graphs.Version, bool) {
	id := c.Param("id")
	v, ok := s.reg.Get(id)
	if !ok {
		s.fail(c, notFound("assistant %q not found (each graph is an assistant named after it)", id))
	}
	return v, ok
}

func (s *Server) getAssistant(c *gin.Context) {
	if v, ok := s.assistant(c); ok {
		c.JSON(http.StatusOK, assistantObject(v))
	}
}

func (s *Server) assistantGraph(c *gin.Context) {
	if v, ok := s.assistant(c); ok {
		c.JSON(http.StatusOK, diagram.Build(v.Graph))
	}
}

// jsonSchemaOf describes a state field type as JSON Schema.
func jsonSchemaOf(t graph.Type) map[string]any {
	switch t.Kind {
	case graph.String:
		return map[string]any{"type": "string"}
	case graph.Int:
		return map[string]any{"type": "integer"}
	case graph.Float:
		return map[string]any{"type": "number"}
	case graph.Bool:
		return map[string]any{"type": "boolean"}
	case graph.List:
		if t.Elem != nil {
			return map[string]any{"type": "array", "items": jsonSchemaOf(*t.Elem)}
		}
		return map[string]any{"type": "array"}
	case graph.Map:
		if t.Elem != nil {
			return map[string]any{"type": "object", "additionalProperties": jsonSchemaOf(*t.Elem)}
		}
		return map[string]any{"type": "object"}
	case graph.Object:
		return map[string]any{"type": "object"}
	case graph.Messages:
		return map[string]any{"type": "array", "items": map[string]any{"type": "object",
			"properties": map[string]any{"role": map[string]any{"type": "string"}, "content": map[string]any{}}, "required": []string{"role"}}}
	case graph.Contracts:
		return map[string]any{"type": "array", "items": map[string]any{"type": "object"}}
	}
	return map[string]any{}
}

func (s *Server) assistantSchemas(c *gin.Context) {
	v, ok := s.assistant(c)
	if !ok {
		return
	}
	props := map[string]any{}
	for _, name := range v.Graph.FieldOrder {
		f := v.Graph.Fields[name]
		sch := jsonSchemaOf(f.Spec.Type)
		if f.Spec.Reducer != "" {
			sch["x-reducer"] = f.Spec.Reducer
		}
		if len(f.Spec.Enum) > 0 {
			sch["enum"] = f.Spec.Enum
		}
		props[name] = sch
	}
	state := map[string]any{"title": v.Name, "type": "object", "properties": props}
	c.JSON(http.StatusOK, gin.H{"graph_id": v.Name, "input_schema": state, "output_schema": state, "state_schema": state,
		"config_schema": map[string]any{"type": "object", "properties": map[string]any{}}, "context_schema": nil})
}
