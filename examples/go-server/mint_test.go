package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
)

// mintHS256 makes a context token with the standard library only.
func mintHS256(claims map[string]any, secret string) string {
	b64 := base64.RawURLEncoding.EncodeToString
	body, _ := json.Marshal(claims)
	signing := b64([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + b64(body)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signing))
	return signing + "." + b64(mac.Sum(nil))
}
