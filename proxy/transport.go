package proxy

// transportEndpoint maps a Jupyter endpoint to the zmq4 transport the proxy
// uses for it.
func transportEndpoint(ep string) string { return ep }
