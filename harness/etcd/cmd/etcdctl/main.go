// Command etcdctl runs the upstream etcd v3 CLI.
package main

import "go.etcd.io/etcd/etcdctl/v3/ctlv3"

func main() {
	ctlv3.MustStart()
}
