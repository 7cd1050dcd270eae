// Command yamldecode is the anchor of `cargo xtask bench dump`: it decodes a
// kubectl dump the way kubectl reads a file (k8s.io/apimachinery's
// YAMLOrJSONDecoder, each document into an unstructured object, a List's
// items into unstructured objects too) and does nothing else. It prints the
// number of objects decoded, so the benchmark can check it read them all.
//
// Usage: yamldecode FILE
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: yamldecode FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	decoder := yaml.NewYAMLOrJSONDecoder(bufio.NewReaderSize(f, 1<<20), 4096)
	objects := 0
	for {
		var object unstructured.Unstructured
		if err := decoder.Decode(&object.Object); err != nil {
			if err == io.EOF {
				break
			}
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if object.Object == nil {
			continue
		}
		if object.IsList() {
			list, err := object.ToList()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			objects += len(list.Items)
			continue
		}
		objects++
	}
	fmt.Println(objects)
}
