package server

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/graphctl/graphctl/runtime/audit"
)

// getThreadLog serves GET /threads/{thread}/log: the thread's audit log
// (conversation record and runs with their messages and node observations),
// as graphctl threads log --json prints it.
func (s *Server) getThreadLog(c *gin.Context) {
	id := c.Param("thread")
	c.Set(ctxThreadID, id)
	if err := validID("thread", id); err != nil {
		s.fail(c, err)
		return
	}
	conv, runs, err := audit.Log(c, s.st, id)
	if errors.Is(err, audit.ErrNoLog) {
		s.fail(c, notFound("%v", err))
		return
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"conversation": conv, "runs": runs})
}
