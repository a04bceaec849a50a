package proxy

// JEP 65: a kernel whose iopub is an XPUB greets each new subscription
// with an iopub_welcome, so a client knows when it will miss nothing more
// (xeus-python does; ipykernel 7 does not). Behind the proxy the kernel
// sees one subscriber, the proxy's own; the frontends subscribe to the
// proxy's PUB. So the proxy greets them itself, once the kernel has shown
// it is a kernel that greets, and keeps the kernel's greeting of the
// proxy to itself.

// kernelWelcomes records that the kernel greets subscriptions, and the
// first time greets the frontends already subscribed.
func (p *Proxy) kernelWelcomes() {
	if p.welcomes.CompareAndSwap(false, true) {
		<-p.ready
		p.front.iopub.WelcomeAll()
	}
}

// welcome is the iopub_welcome for a frontend's new subscription to topic,
// or nil while the kernel has not shown that it greets.
func (p *Proxy) welcome(topic []byte) [][]byte {
	if !p.welcomes.Load() {
		return nil
	}
	m, err := p.Builder.Build([][]byte{topic}, "iopub_welcome", nil, map[string]string{"subscription": string(topic)})
	if err != nil {
		p.log.Printf("iopub: build the welcome of a subscription: %v", err)
		return nil
	}
	return m.Frames()
}
