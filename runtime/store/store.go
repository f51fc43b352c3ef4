// Package store defines long-term memory: JSON documents addressed by a
// namespace (a list of strings, e.g. ["memories", "user-42"]) and a key, with
// filters, time-to-live, text search and, with an Embedder, semantic search
// (exact cosine similarity). The Badger implementation lives in
// runtime/storage/badger; any backend passes the suite in store/storetest.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned by Get for a missing or expired item.
var ErrNotFound = errors.New("store: item not found")

// Item is one stored document.
type Item struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	// ExpiresAt is zero for items without a TTL.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Score is the relevance of a search hit (0 for plain listings).
	Score float64 `json:"score,omitempty"`
}

// PutOptions tune a Put.
type PutOptions struct {
	// TTL makes the item expire after this long; zero means never.
	TTL time.Duration
	// Index lists the value fields (dotted paths) whose text is indexed for
	// search. Nil means the store's default (every string field); an empty,
	// non-nil slice means the item is not indexed.
	Index []string
}

// SearchQuery selects items under a namespace prefix.
type SearchQuery struct {
	// Query is free text ranked by BM25 over indexed fields; empty lists items
	// newest first.
	Query string
	// Filter matches value fields: {"field": value} for equality or
	// {"field": {"$gt": 3}} with $eq, $ne, $gt, $gte, $lt, $lte.
	Filter map[string]any
	Limit  int
	Offset int
}

// NamespaceQuery selects namespaces.
type NamespaceQuery struct {
	Prefix []string
	Suffix []string
	// MaxDepth truncates namespaces to this many elements (0 = no limit).
	MaxDepth int
	Limit    int
	Offset   int
}

// BatchPut is one item of a Batcher's PutBatch: what Put takes, or with
// Delete what Delete takes (Value and Opts are then not used).
type BatchPut struct {
	Namespace []string
	Key       string
	Value     map[string]any
	Opts      PutOptions
	Delete    bool
	// New says that no item is stored under the key (one the caller made
	// unique and has not written before): a store may then skip reading
	// the item a put would replace.
	New bool
}

// Batcher is implemented by stores that can put (and delete) several items
// in one transaction: every item is stored or deleted, or none, in one
// commit instead of one per item.
type Batcher interface {
	PutBatch(ctx context.Context, items []BatchPut) error
}

// Store is a long-term memory store. Implementations are safe for concurrent use.
type Store interface {
	Put(ctx context.Context, namespace []string, key string, value map[string]any, opts PutOptions) error
	Get(ctx context.Context, namespace []string, key string) (*Item, error)
	Delete(ctx context.Context, namespace []string, key string) error
	Search(ctx context.Context, namespacePrefix []string, q SearchQuery) ([]Item, error)
	ListNamespaces(ctx context.Context, q NamespaceQuery) ([][]string, error)
}

// ItemRef names one item.
type ItemRef struct {
	Namespace []string
	Key       string
}

// TTLRefresher is implemented by stores that restart the TTL of items when
// they are read, as LangGraph's stores do for reads with refresh_ttl: an
// item stored with a TTL then expires that TTL after now. Items without a
// TTL, and missing or expired items, are left as they are.
type TTLRefresher interface {
	RefreshTTL(ctx context.Context, items []ItemRef) error
}
