package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
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

func notFound(format string, args ...any) *apiError {
	return errorf(http.StatusNotFound, "not_found", format, args...)
}

func conflict(format string, args ...any) *apiError {
	return errorf(http.StatusConflict, "conflict", format, args...)
}

// fail writes err as {"error": {"code", "message"}}: an apiError with its
// status, anything else as a 500 that is logged.
func (s *Server) fail(c *gin.Context, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		s.log.Error("request failed", "method", c.Request.Method, "path", c.FullPath(), "error", err)
		ae = &apiError{status: http.StatusInternalServerError, code: "internal", message: err.Error()}
	}
	c.AbortWithStatusJSON(ae.status, gin.H{"error": gin.H{"code": ae.code, "message": ae.message}})
}

// paging is the limit and offset of a list request.
type paging struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// check gives a missing limit its default and rejects a negative offset.
func (p *paging) check(defaultLimit int) error {
	if p.Limit <= 0 {
		p.Limit = defaultLimit
	}
	if p.Offset < 0 {
		return badRequest("offset must not be negative")
	}
	return nil
}
