package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"

	"github.com/tmc/langchaingo/llms"

	"github.com/graphctl/graphctl/builtin-nodes/internal/callretry"
	"github.com/graphctl/graphctl/runtime/node"
)

// statusRe finds the HTTP status langchaingo's clients put in their errors
// ("API returned unexpected status code: 429: …").
var statusRe = regexp.MustCompile(`status code:? (\d{3})`)

// classify turns a model call's error (after the call's own retries) into
// a node error a retry policy can match: HTTP 429 is retryable
// "rate_limit"; 5xx, timeouts, network failures, a broken stream and an
// answer that is not valid JSON are retryable "llm_error"; anything else is
// a plain "llm_error". A call cut because ctx ended is reported as such
// (see cut), whatever the client made of its aborted request.
func classify(ctx context.Context, nodeName string, err error) error {
	if cerr := cut(ctx, "llm node", nodeName); cerr != nil {
		return cerr
	}
	wrapped := fmt.Errorf("llm node %q: model call: %w", nodeName, err)
	if m := statusRe.FindStringSubmatch(err.Error()); m != nil {
		code, _ := strconv.Atoi(m[1])
		switch {
		case code == 429:
			return node.Retryable("rate_limit", wrapped)
		case code >= 500:
			return node.Retryable("llm_error", wrapped)
		}
		return node.Errorf("llm_error", "%w", wrapped)
	}
	var le *llms.Error
	if errors.As(err, &le) {
		switch le.Code {
		case llms.ErrCodeRateLimit:
			return node.Retryable("rate_limit", wrapped)
		case llms.ErrCodeProviderUnavailable, llms.ErrCodeTimeout:
			return node.Retryable("llm_error", wrapped)
		}
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return node.Retryable("llm_error", wrapped)
	}
	var op *net.OpError
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, ErrBrokenStream), errors.As(err, &op), callretry.TransientError(err).Transient:
		return node.Retryable("llm_error", wrapped)
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return node.Retryable("llm_error", fmt.Errorf("llm node %q: model call: the answer is not valid JSON (cut or garbled): %w", nodeName, err))
	}
	return node.Errorf("llm_error", "%w", wrapped)
}

// cut returns the error of a model call that failed because ctx ended, nil
// when ctx is still live. The clients turn an aborted request into a
// network error ("failed to reach API server"), which would blame the
// model's server for a run that was cancelled or a node that ran out of
// time; the error wraps ctx's error instead (errors.Is matches
// context.Canceled or context.DeadlineExceeded) and says which it was. A timeout is a retryable "timeout", as the
// engine reports a node's; a cancellation is no node error, so that no
// retry or catch policy takes it.
func cut(ctx context.Context, kind, nodeName string) error {
	cerr := ctx.Err()
	if cerr == nil {
		return nil
	}
	if errors.Is(cerr, context.DeadlineExceeded) {
		return node.Retryable("timeout", fmt.Errorf("%s %q: model call timed out: %w", kind, nodeName, cerr))
	}
	return fmt.Errorf("%s %q: model call cancelled: %w", kind, nodeName, cerr)
}
