// Package wire is the Jupyter messaging protocol on ZeroMQ frames: splitting
// a multipart message at the <IDS|MSG> delimiter, HMAC signing and
// verification, and building the proxy's own messages.
//
// Forwarded messages are never re-marshalled: a Message keeps the frames it
// was parsed from, so fields this package does not know (subshell_id, a
// newer protocol's additions) travel untouched.
package wire
