package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/routes"
)

func init() { commands = append(commands, newRoutesCmd) }

func newRoutesCmd() *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "routes",
		Short: "Print the routes matrix: which source → destination pairs work",
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(routes.Matrix())
			}
			fmt.Fprintf(out, "table schemes (transfer, dagfile connections): %s\n", strings.Join(routes.Schemes(), " "))
			fmt.Fprintf(out, "stream schemes (dagfile stream tasks): %s\n\n", strings.Join(routes.StreamSchemes(), " "))
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SOURCE\tDESTINATION\tSTATUS")
			for _, r := range routes.Matrix() {
				if r.Implemented {
					fmt.Fprintf(w, "%s\t%s\timplemented\n", r.Source, r.Destination)
				} else if all {
					fmt.Fprintf(w, "%s\t%s\tdeferred: %s\n", r.Source, r.Destination, r.Reason)
				}
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every pair as JSON")
	cmd.Flags().BoolVar(&all, "all", false, "also list deferred pairs with the reason")
	return cmd
}
