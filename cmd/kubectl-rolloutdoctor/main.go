package main

import (
	_ "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/spf13/cobra"
	_ "k8s.io/cli-runtime/pkg/genericclioptions"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	_ "sigs.k8s.io/yaml"
	_ "golang.org/x/term"
	_ "golang.org/x/sync/errgroup"
)

func main() {}
