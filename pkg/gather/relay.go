package gather

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// What the credential plugins of a multi-cluster scan print.
//
// client-go runs an exec credential plugin with this process's stderr as
// its own: the authenticator takes os.Stderr when it is made and gives it
// to the plugin's command (k8s.io/client-go@v0.34.5
// plugin/pkg/client/auth/exec/exec.go:195 and :438), and offers no way to
// give it anything else. One cluster's plugin speaking on the terminal is
// what a user expects; in a scan of several clusters, "SSO session
// expired" or a device code to enter arrived unattributed, between the
// progress line's redraws, and never in the cluster's row or its JSON.
// So a scan has each context's plugin run through this binary
// (RelayArg): the relay starts the plugin, hands it stdin, stdout and the
// environment as client-go gave them, and sends its stderr to the scan
// over a socket of the scan's own, where PluginOutput attributes it to the
// contexts that use the plugin.

// RelayArg, as the first argument, makes this binary relay a credential
// plugin's stderr to a scan (RunRelay) instead of running a command.
const RelayArg = "__relay-credential-plugin"

// One relay for each plugin, not for each context: client-go runs a
// plugin once for every client whose exec config is the same (its
// authenticator cache, exec.go:84), so that contexts that log in the same
// way — AKS clusters of one tenant, clusters behind one OIDC issuer — get
// one device code or browser tab, not one each. A relayed plugin speaks
// for every context that uses it.

// printedLines is how many of a plugin run's last lines an error quotes.
const printedLines = 3

// maxPrintedLine bounds a line kept or shown, in bytes; a plugin may
// print a whole JSON document or a progress bar without a line break.
const maxPrintedLine = 400

// PluginOutput receives what the credential plugins of a multi-cluster
// scan print on stderr. The last lines of each plugin's last run are kept
// for the error that names it (printedBy), and every line is passed to
// onLine as it comes, with the contexts that use the plugin, for the
// terminal. A nil PluginOutput relays nothing: plugins print on stderr as
// client-go lets them.
type PluginOutput struct {
	dir, addr string
	ln        net.Listener
	onLine    func(contexts []string, line string)

	mu sync.Mutex
	// A relayed plugin is known by an id ("p1", …): ids by the exec
	// config's dump, and the contexts that use each.
	ids      map[string]string
	contexts map[string][]string
	printed  map[string][]string // by id
	conns    map[net.Conn]bool
	closed   bool
	wg       sync.WaitGroup
}

// outputs are the open PluginOutputs by their socket's path, for Connect
// to find the one a relayed plugin speaks to.
var outputs sync.Map

// ListenPluginOutput opens the socket the relays speak to: a Unix socket
// in a directory of its own that only this user can enter. onLine (nil:
// none) is called with each line a plugin prints, without control
// characters, and the contexts known to use it, one line at a time per
// plugin. An error (no Unix sockets: Windows before 10) means the plugins
// print on stderr as they did.
func ListenPluginOutput(onLine func(contexts []string, line string)) (*PluginOutput, error) {
	dir, err := os.MkdirTemp("", "rolloutdoctor-")
	if err != nil {
		return nil, err
	}
	addr := filepath.Join(dir, "plugins")
	ln, err := net.Listen("unix", addr)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := &PluginOutput{dir: dir, addr: addr, ln: ln, onLine: onLine, ids: map[string]string{}, contexts: map[string][]string{},
		printed: map[string][]string{}, conns: map[net.Conn]bool{}}
	outputs.Store(addr, p)
	p.wg.Go(p.accept)
	return p, nil
}

func (p *PluginOutput) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		p.conns[c] = true
		p.mu.Unlock()
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve reads one plugin run: the plugin's id on the first line, then
// what the plugin prints. Closing the connection once all is
// read tells the relay that its lines are kept, so that it exits (and
// client-go reports the plugin's failure) only after they are.
func (p *PluginOutput) serve(c net.Conn) {
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReader(c)
	hello, err := r.ReadString('\n')
	if err != nil {
		return
	}
	id := strings.TrimSuffix(hello, "\n")
	p.mu.Lock()
	_, known := p.contexts[id]
	if known {
		p.printed[id] = nil // a new run: what the last one said is stale
	}
	p.mu.Unlock()
	if !known {
		return
	}
	for {
		line, err := readLine(r, maxPrintedLine)
		if line = printable(line); line != "" {
			p.mu.Lock()
			kept := append(p.printed[id], line)
			if len(kept) > printedLines {
				kept = kept[len(kept)-printedLines:]
			}
			p.printed[id] = kept
			users := slices.Sorted(slices.Values(p.contexts[id]))
			p.mu.Unlock()
			if p.onLine != nil {
				p.onLine(users, line)
			}
		}
		if err != nil {
			return
		}
	}
}

// readLine reads up to the next line break and returns at most max bytes
// of the line, discarding the rest of it; err is the reader's at the end.
func readLine(r *bufio.Reader, max int) (string, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if room := max - len(b); room > 0 {
			b = append(b, chunk[:min(len(chunk), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return string(b), err
	}
}

// printable is a plugin's line as a terminal or a JSON reader should see
// it: without ANSI styling, carriage-return redraws or other control
// characters, trimmed.
func printable(line string) string {
	line = ansi.Strip(line)
	if i := strings.LastIndexByte(strings.TrimRight(line, "\r\n"), '\r'); i >= 0 {
		line = line[i+1:] // a spinner's last frame
	}
	line = strings.Map(func(r rune) rune {
		if r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return -1
		}
		return r
	}, line)
	return strings.TrimSpace(line)
}

// printedBy is what the last run of plugin id printed: its last lines, at
// most three.
func (p *PluginOutput) printedBy(id string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.printed[id])
}

// Relay has cfg's exec credential plugin, if it has one, run through this
// binary for context, so that what it prints reaches p. Contexts whose
// plugins client-go would run once (the same exec config, and for a
// plugin given the cluster's details, the same context) get the same
// relayed config, so that they still do. A plugin that cannot be found in
// PATH is left as it is, for client-go to say so as it does (and the
// error to give its installHint).
func (p *PluginOutput) Relay(context string) func(*rest.Config) {
	return func(cfg *rest.Config) {
		if p == nil || cfg.ExecProvider == nil {
			return
		}
		path, err := exec.LookPath(cfg.ExecProvider.Command)
		if err != nil {
			return
		}
		self, err := os.Executable()
		if err != nil {
			return
		}
		key := struct {
			Exec    *clientcmdapi.ExecConfig
			Context string
		}{Exec: cfg.ExecProvider}
		if cfg.ExecProvider.ProvideClusterInfo {
			key.Context = context
		}
		id := p.register(dump.Pretty(key), context)
		e := *cfg.ExecProvider
		e.Command = self
		e.Args = append([]string{RelayArg, p.addr, id, "--", path}, cfg.ExecProvider.Args...)
		cfg.ExecProvider = &e
	}
}

// register gives the plugin whose config dumps as key its id, with
// context among its users.
func (p *PluginOutput) register(key, context string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.ids[key]
	if !ok {
		id = "p" + strconv.Itoa(len(p.ids)+1)
		p.ids[key] = id
	}
	if !slices.Contains(p.contexts[id], context) {
		p.contexts[id] = append(p.contexts[id], context)
	}
	return id
}

// relayedOutput finds, for an exec config Relay rewrote, the
// PluginOutput its plugin speaks to and the plugin's id there.
func relayedOutput(e *clientcmdapi.ExecConfig) (*PluginOutput, string, bool) {
	if e == nil || len(e.Args) < 5 || e.Args[0] != RelayArg || e.Args[3] != "--" {
		return nil, "", false
	}
	p, ok := outputs.Load(e.Args[1])
	if !ok {
		return nil, "", false
	}
	return p.(*PluginOutput), e.Args[2], true
}

// Close stops listening and removes the socket. A plugin still running
// (one given up on) is cut off; its relay prints the rest on stderr.
func (p *PluginOutput) Close() error {
	if p == nil {
		return nil
	}
	outputs.Delete(p.addr)
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	os.RemoveAll(p.dir)
	return err
}

// RunRelay runs a credential plugin for a scan and returns its exit code:
// args are the scan's socket, the plugin's id there, "--", the plugin's
// path and its arguments. The plugin gets this process's stdin, stdout
// and environment (client-go's KUBERNETES_EXEC_INFO and the kubeconfig's
// env among them); its stderr goes to the scan. When the scan cannot be
// reached, the plugin's stderr is this process's, as without the relay.
func RunRelay(args []string) int {
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintln(os.Stderr, "rolloutdoctor: "+RelayArg+" is for the credential plugins of `scan --contexts`, not to be run by hand")
		return 2
	}
	addr, id, plugin := args[0], args[1], args[3:]
	cmd := exec.Command(plugin[0], plugin[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	var conn *net.UnixConn
	if c, err := net.DialTimeout("unix", addr, 2*time.Second); err == nil {
		conn = c.(*net.UnixConn)
		defer conn.Close()
	}
	var copied chan struct{}
	if conn != nil {
		if _, err := fmt.Fprintln(conn, id); err != nil {
			conn = nil
		}
	}
	if conn != nil {
		r, w, err := os.Pipe()
		if err != nil {
			conn = nil
		} else {
			cmd.Stderr = w
			copied = make(chan struct{})
			go func() {
				defer close(copied)
				defer r.Close()
				if _, err := io.Copy(conn, r); err != nil {
					// The scan is gone (it gave up on this plugin): the
					// rest goes where it would have without the relay.
					io.Copy(os.Stderr, r)
				}
			}()
			defer w.Close()
		}
	}
	say := func(msg string) {
		if conn != nil {
			fmt.Fprintln(conn, msg)
		} else {
			fmt.Fprintln(os.Stderr, msg)
		}
	}
	// Stopped (Ctrl-C, or the scan stopping a plugin it gave up on), the
	// relay stops the plugin too.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		say(fmt.Sprintf("cannot start %s: %v", plugin[0], err))
		return finishRelay(conn, copied, cmd.Stderr, 127)
	}
	go func() {
		for s := range sig {
			cmd.Process.Signal(s)
		}
	}()
	code := 0
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if code = 1; errors.As(err, &ee) && ee.ExitCode() > 0 {
			code = ee.ExitCode()
		}
	}
	signal.Stop(sig)
	return finishRelay(conn, copied, cmd.Stderr, code)
}

// finishRelay closes the relay's end of the plugin's stderr, lets the
// scan read what is left and waits for it to close the connection: once
// the relay exits, client-go reports the plugin's result, and the error
// must find its lines kept.
func finishRelay(conn *net.UnixConn, copied chan struct{}, stderr io.Writer, code int) int {
	if conn == nil {
		return code
	}
	if w, ok := stderr.(*os.File); ok && w != os.Stderr {
		w.Close()
	}
	if copied != nil {
		// A process the plugin left running may hold its stderr open: what
		// it prints later is not the plugin's answer.
		select {
		case <-copied:
		case <-time.After(250 * time.Millisecond):
		}
	}
	if conn.CloseWrite() == nil { // else the scan sees the end as the relay exits
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		io.Copy(io.Discard, conn)
	}
	return code
}
