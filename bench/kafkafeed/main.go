// Command kafkafeed is the Kafka broker of bench/kafka_to_iceberg.sh: an
// in-process kfake cluster on -port with one topic of -partitions
// partitions holding -events JSON events (about 200 bytes each), served
// until SIGTERM. It prints "ready" on stdout once the events are in.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	port := flag.Int("port", 19092, "broker port")
	topic := flag.String("topic", "events", "topic")
	partitions := flag.Int("partitions", 4, "partitions")
	events := flag.Int("events", 1_000_000, "events to produce")
	flag.Parse()
	if err := run(*port, *topic, int32(*partitions), *events); err != nil {
		fmt.Fprintln(os.Stderr, "kafkafeed:", err)
		os.Exit(1)
	}
}

func run(port int, topic string, partitions int32, events int) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	c, err := kfake.NewCluster(kfake.Ports(port), kfake.SeedTopics(partitions, topic))
	if err != nil {
		return err
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic(topic),
		kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := produce(ctx, cl, events); err != nil {
		return err
	}
	fmt.Println("ready")
	<-ctx.Done()
	return nil
}

// produce sends the events asynchronously and waits for every ack.
func produce(ctx context.Context, cl *kgo.Client, events int) error {
	errc := make(chan error, 1)
	for i := 1; i <= events; i++ {
		v := fmt.Sprintf(`{"id":%d,"account":%d,"kind":"click","url":"https://example.test/p/%d","amount":%d.%02d,"ok":%t,"ts":"2026-01-01T00:00:%02dZ","note":"event number %d of the bench feed"}`,
			i, i%1000, i%97, i, i%100, i%3 == 0, i%60, i)
		cl.Produce(ctx, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: []byte(v)}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errc <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	select {
	case err := <-errc:
		return fmt.Errorf("produce: %w", err)
	default:
		return nil
	}
}
