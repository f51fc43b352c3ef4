package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/audit"
	"github.com/graphctl/graphctl/runtime/store"
)

// reservedNS is the namespace the server keeps its own records under; the
// store API does not expose it.
const reservedNS = "graphctl"

// reserved reports whether a namespace holds the server's own records: its
// records (under reservedNS) and the audit log (audit.ConversationsNS and
// audit.RunsNS), which the store API neither shows nor writes.
func reserved(ns []string) bool {
	if len(ns) == 0 {
		return false
	}
	if ns[0] == reservedNS {
		return true
	}
	return len(ns) >= 2 && ns[0] == audit.ConversationsNS[0] && (ns[1] == audit.ConversationsNS[1] || ns[1] == auditRunsLabel)
}

// auditRunsLabel is the second label of the audit log's runs namespaces.
var auditRunsLabel = audit.RunsNS("")[1]

func checkNamespace(ns []string, allowEmpty bool) error {
	if len(ns) == 0 && !allowEmpty {
		return invalid("namespace must be a non-empty list of strings")
	}
	for i, l := range ns {
		if l == "" || strings.Contains(l, ".") {
			return invalid("namespace label %d (%q) must be non-empty and contain no '.'", i, l)
		}
	}
	if reserved(ns) {
		return errorf(http.StatusForbidden, "forbidden", "namespace %q is reserved for the server's own records (read the audit log at GET /threads/{thread_id}/log)", ns)
	}
	return nil
}

func itemObject(it *store.Item) map[string]any {
	out := map[string]any{"namespace": it.Namespace, "key": it.Key, "value": it.Value,
		"created_at": it.CreatedAt.UTC().Format(time.RFC3339Nano), "updated_at": it.UpdatedAt.UTC().Format(time.RFC3339Nano)}
	if it.Score != 0 {
		out["score"] = it.Score
	}
	return out
}

type putItemBody struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	Index     any            `json:"index"`
	TTL       *float64       `json:"ttl"`
}

func (s *Server) putItem(c *gin.Context) {
	var body putItemBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if err := checkNamespace(body.Namespace, false); err != nil {
		s.fail(c, err)
		return
	}
	if body.Key == "" {
		s.fail(c, invalid("key is required"))
		return
	}
	if body.Value == nil {
		s.fail(c, invalid("value must be a JSON object"))
		return
	}
	var opts store.PutOptions
	if body.TTL != nil {
		if *body.TTL < 0 || *body.TTL > maxTTLMinutes {
			s.fail(c, invalid("ttl must be between 0 and %d minutes (100 years), got %v", maxTTLMinutes, *body.TTL))
			return
		}
		opts.TTL = time.Duration(*body.TTL * float64(time.Minute))
	}
	switch ix := body.Index.(type) {
	case nil:
	case bool:
		if !ix {
			opts.Index = []string{}
		}
	case []any:
		opts.Index = []string{}
		for _, f := range ix {
			fs, ok := f.(string)
			if !ok {
				s.fail(c, invalid("index must be false or a list of field paths"))
				return
			}
			opts.Index = append(opts.Index, fs)
		}
	default:
		s.fail(c, invalid("index must be false or a list of field paths"))
		return
	}
	if err := s.items.Put(c, body.Namespace, body.Key, body.Value, opts); err != nil {
		if ae := embeddingFailed(err); ae != nil {
			s.fail(c, ae)
			return
		}
		s.fail(c, badRequest("put item %q: %v", body.Key, err))
		return
	}
	c.Status(http.StatusNoContent)
}

func (s *Server) getItem(c *gin.Context) {
	nsText, key := c.Query("namespace"), c.Query("key")
	var ns []string
	if nsText != "" {
		ns = strings.Split(nsText, ".")
	}
	if err := checkNamespace(ns, false); err != nil {
		s.fail(c, err)
		return
	}
	if key == "" {
		s.fail(c, invalid("key is required"))
		return
	}
	refresh := true
	switch v := c.Query("refresh_ttl"); v {
	case "", "null":
	default:
		var err error
		if refresh, err = strconv.ParseBool(v); err != nil {
			s.fail(c, invalid("refresh_ttl must be true or false, got %q", v))
			return
		}
	}
	it, err := s.items.Get(c, ns, key)
	if errors.Is(err, store.ErrNotFound) {
		// LangGraph answers a missing item with null; the SDK's getItem
		// then returns null.
		c.JSON(http.StatusOK, nil)
		return
	}
	if err != nil {
		s.fail(c, fmt.Errorf("get item %q: %w", key, err))
		return
	}
	if refresh {
		if err := s.refreshTTL(c, []store.Item{*it}); err != nil {
			s.fail(c, err)
			return
		}
	}
	c.JSON(http.StatusOK, itemObject(it))
}

type deleteItemBody struct {
	Namespace []string `json:"namespace"`
	Key       string   `json:"key"`
}

func (s *Server) deleteItem(c *gin.Context) {
	var body deleteItemBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if err := checkNamespace(body.Namespace, false); err != nil {
		s.fail(c, err)
		return
	}
	if body.Key == "" {
		s.fail(c, invalid("key is required"))
		return
	}
	if err := s.items.Delete(c, body.Namespace, body.Key); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.fail(c, fmt.Errorf("delete item %q: %w", body.Key, err))
		return
	}
	c.Status(http.StatusNoContent)
}

type searchItemsBody struct {
	NamespacePrefix []string       `json:"namespace_prefix"`
	Filter          map[string]any `json:"filter"`
	paging
	Query string `json:"query"`
	// RefreshTTL, true unless false, restarts the TTL of the items found.
	RefreshTTL *bool `json:"refresh_ttl"`
}

func (s *Server) searchItems(c *gin.Context) {
	var body searchItemsBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if err := checkNamespace(body.NamespacePrefix, true); err != nil {
		s.fail(c, err)
		return
	}
	if err := body.paging.check(10); err != nil {
		s.fail(c, err)
		return
	}
	// The server's own records are left out, so a page may need more than
	// offset+limit items from the store: ask for more until it has them.
	var items []store.Item
	for want := body.Limit + body.Offset + 1000; ; want *= 4 {
		got, err := s.items.Search(c, body.NamespacePrefix, store.SearchQuery{Query: body.Query, Filter: body.Filter, Limit: want})
		if err != nil {
			if ae := embeddingFailed(err); ae != nil {
				s.fail(c, ae)
				return
			}
			s.fail(c, badRequest("search items: %v", err))
			return
		}
		items = slices.DeleteFunc(got, func(it store.Item) bool { return reserved(it.Namespace) })
		if len(got) < want || len(items) >= body.Limit+body.Offset {
			break
		}
	}
	out := []map[string]any{}
	page := items[min(body.Offset, len(items)):]
	page = page[:min(body.Limit, len(page))]
	for i := range page {
		out = append(out, itemObject(&page[i]))
	}
	if body.RefreshTTL == nil || *body.RefreshTTL {
		if err := s.refreshTTL(c, page); err != nil {
			s.fail(c, err)
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"items": out})
}

// refreshTTL restarts the TTL of the items read that have one, as
// LangGraph's store does on a read unless refresh_ttl is false (store items
// with a TTL then expire that TTL after their last read).
func (s *Server) refreshTTL(ctx context.Context, items []store.Item) error {
	r, ok := s.items.(store.TTLRefresher)
	if !ok {
		return nil
	}
	var refs []store.ItemRef
	for _, it := range items {
		if !it.ExpiresAt.IsZero() {
			refs = append(refs, store.ItemRef{Namespace: it.Namespace, Key: it.Key})
		}
	}
	if len(refs) == 0 {
		return nil
	}
	if err := r.RefreshTTL(ctx, refs); err != nil {
		return fmt.Errorf("refresh the ttl of %d items: %w", len(refs), err)
	}
	return nil
}

type namespacesBody struct {
	Prefix   []string `json:"prefix"`
	Suffix   []string `json:"suffix"`
	MaxDepth int      `json:"max_depth"`
	paging
}

func (s *Server) listNamespaces(c *gin.Context) {
	var body namespacesBody
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if err := body.paging.check(100); err != nil {
		s.fail(c, err)
		return
	}
	if body.MaxDepth < 0 {
		s.fail(c, invalid("max_depth must not be negative"))
		return
	}
	// The reserved namespaces go before max_depth cuts the rest, so that
	// no prefix of theirs shows.
	nss, err := s.items.ListNamespaces(c, store.NamespaceQuery{Prefix: body.Prefix, Suffix: body.Suffix, Limit: 100000})
	if err != nil {
		s.fail(c, badRequest("list namespaces: %v", err))
		return
	}
	nss = slices.DeleteFunc(nss, reserved)
	if body.MaxDepth > 0 {
		seen := map[string]bool{}
		cut := nss[:0:0]
		for _, ns := range nss {
			if len(ns) > body.MaxDepth {
				ns = ns[:body.MaxDepth]
			}
			if k := strings.Join(ns, "\x00"); !seen[k] {
				seen[k] = true
				cut = append(cut, ns)
			}
		}
		nss = cut
	}
	out := [][]string{}
	skipped := 0
	for _, ns := range nss {
		if skipped < body.Offset {
			skipped++
			continue
		}
		if len(out) >= body.Limit {
			break
		}
		out = append(out, ns)
	}
	c.JSON(http.StatusOK, gin.H{"namespaces": out})
}
