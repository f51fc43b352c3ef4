package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// maxInlineImage bounds an image fetched to be sent inline: Gemini takes at
// most 20 MB of inline data in one request.
const maxInlineImage = 20 << 20

// inlineImages sends Gemini's OpenAI-compatible endpoint the images of a
// chat request that are http(s) addresses as data URLs, fetched here:
// that endpoint reads images from inline data, not from addresses, so an
// image given by URL (a message's image_url part) would otherwise fail or
// be ignored. Requests without such an image pass through unchanged.
type inlineImages struct {
	// next sends the rewritten request to the model server.
	next http.RoundTripper
	// fetch gets the images (a plain client: the model client's retry
	// policy belongs to the model server).
	fetch *http.Client
}

// RoundTrip implements http.RoundTripper.
func (t inlineImages) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		return t.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the chat request: %w", err)
	}
	if bytes.Contains(body, []byte(`"image_url"`)) && bytes.Contains(body, []byte(`"http`)) {
		if body, err = t.inline(req, body); err != nil {
			// Answered as the model server answers a bad request, so the
			// model client reports the reason and does not retry it.
			return errorResponse(req, http.StatusBadRequest, "invalid_request_error", err.Error()), nil
		}
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.next.RoundTrip(out)
}

// inline rewrites the image_url parts of body's messages that are http(s)
// addresses into data URLs.
func (t inlineImages) inline(req *http.Request, body []byte) ([]byte, error) {
	var chat map[string]any
	if err := json.Unmarshal(body, &chat); err != nil {
		return body, nil // not ours to judge: the model server answers it
	}
	messages, _ := chat["messages"].([]any)
	changed := false
	for _, m := range messages {
		msg, _ := m.(map[string]any)
		parts, _ := msg["content"].([]any)
		for _, p := range parts {
			part, _ := p.(map[string]any)
			img, _ := part["image_url"].(map[string]any)
			url, _ := img["url"].(string)
			if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
				continue
			}
			data, err := t.dataURL(req, url)
			if err != nil {
				return nil, err
			}
			img["url"] = data
			changed = true
		}
	}
	if !changed {
		return body, nil
	}
	out, err := json.Marshal(chat)
	if err != nil {
		return nil, fmt.Errorf("encode the chat request: %w", err)
	}
	return out, nil
}

// dataURL fetches the image at url as a base64 data URL.
func (t inlineImages) dataURL(req *http.Request, url string) (string, error) {
	get, err := http.NewRequestWithContext(req.Context(), http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", url, err)
	}
	resp, err := t.fetch.Do(get)
	if err != nil {
		return "", fmt.Errorf("fetch image %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("fetch image %s: %s", url, resp.Status)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxInlineImage+1))
	if err != nil {
		return "", fmt.Errorf("fetch image %s: %w", url, err)
	}
	if len(raw) > maxInlineImage {
		return "", fmt.Errorf("image %s is larger than %d MB, the most Gemini takes inline", url, maxInlineImage>>20)
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if !strings.HasPrefix(mediaType, "image/") {
		mediaType = http.DetectContentType(raw)
	}
	if !strings.HasPrefix(mediaType, "image/") {
		return "", fmt.Errorf("fetch image %s: got %s, not an image", url, mediaType)
	}
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(raw), nil
}
