package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/checkpoint"
	"github.com/graphctl/graphctl/runtime/store"
)

// apiError is an error with the HTTP status and code it is reported with.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, "bad_request", format, args...)
}

// invalid is a request that is well-formed JSON but whose values are out of
// range (LangGraph answers those with 422).
func invalid(format string, args ...any) *apiError {
	return errorf(http.StatusUnprocessableEntity, "invalid", format, args...)
}

func notFound(format string, args ...any) *apiError {
	return errorf(http.StatusNotFound, "not_found", format, args...)
}

// embeddingFailed reports the failure of the store's embedder as a 502: the
// model behind semantic search, not the request, is at fault. It returns nil
// for any other error.
func embeddingFailed(err error) *apiError {
	var ee *store.EmbeddingError
	if !errors.As(err, &ee) {
		return nil
	}
	return errorf(http.StatusBadGateway, "embedding_failed", "%v", err)
}

func conflict(format string, args ...any) *apiError {
	return errorf(http.StatusConflict, "conflict", format, args...)
}

// fail writes err as LangGraph's {"detail": message} with graphctl's
// {"error": {"code", "message"}} beside it: an apiError with its status,
// anything else as a 500 that is logged.
func (s *Server) fail(c *gin.Context, err error) {
	var ae *apiError
	if !errors.As(err, &ae) && errors.Is(err, checkpoint.ErrStorageFull) {
		ae = &apiError{status: http.StatusInsufficientStorage, code: "storage_full", message: err.Error()}
	}
	if ae == nil {
		s.log.Error("request failed", "method", c.Request.Method, "path", c.FullPath(), "error", err)
		ae = &apiError{status: http.StatusInternalServerError, code: "internal", message: err.Error()}
	}
	c.AbortWithStatusJSON(ae.status, errorBody(ae.code, ae.message))
}

func errorBody(code, message string) gin.H {
	return gin.H{"detail": message, "error": gin.H{"code": code, "message": message}}
}

// maxLimit is the largest page a list request may ask for, as in LangGraph.
const maxLimit = 1000

// paging is the limit and offset of a list request. Decode into it, then
// call check.
type paging struct {
	RawLimit  *int `json:"limit"`
	RawOffset *int `json:"offset"`
	// Limit and Offset are the checked values.
	Limit  int `json:"-"`
	Offset int `json:"-"`
}

// check gives a missing limit its default and rejects (422) a limit outside
// 1..1000 or a negative offset, naming the field.
func (p *paging) check(defaultLimit int) error {
	p.Limit, p.Offset = defaultLimit, 0
	if p.RawLimit != nil {
		if *p.RawLimit < 1 || *p.RawLimit > maxLimit {
			return invalid("limit must be between 1 and %d, got %d", maxLimit, *p.RawLimit)
		}
		p.Limit = *p.RawLimit
	}
	if p.RawOffset != nil {
		if *p.RawOffset < 0 {
			return invalid("offset must not be negative, got %d", *p.RawOffset)
		}
		p.Offset = *p.RawOffset
	}
	return nil
}

// queryPaging reads and checks the limit and offset query parameters of a
// list request (422 for a value that is not an integer or out of range).
func queryPaging(c *gin.Context, defaultLimit int) (paging, error) {
	var p paging
	for _, q := range []struct {
		name string
		dst  **int
	}{{"limit", &p.RawLimit}, {"offset", &p.RawOffset}} {
		name, dst := q.name, q.dst
		raw, ok := c.GetQuery(name)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil {
			return p, invalid("%s must be an integer, got %q", name, raw)
		}
		*dst = &n
	}
	return p, p.check(defaultLimit)
}

// setPagination sets LangGraph's X-Pagination-Total (and X-Pagination-Next
// when more items follow) for a page of n items out of total.
func setPagination(c *gin.Context, p paging, n, total int) {
	c.Header("X-Pagination-Total", fmt.Sprint(total))
	if p.Offset+n < total {
		c.Header("X-Pagination-Next", fmt.Sprint(p.Offset+n))
	}
}
