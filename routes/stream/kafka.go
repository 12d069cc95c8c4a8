package stream

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirhq/weir/routes"
)

// Kafka (kafka://broker:9092,broker2:9092/topic?group=g). The source joins
// consumer group g (default: the one Options.Group names) with
// auto-commit off. The cursor is the next offset to read in each
// partition of the topic, URL-query encoded ("0=12&1=40"). On every
// assignment the partitions the sink's cursor knows start from it — the
// sink, not the group, is the source of truth — and the rest from the
// group's committed offset, else the earliest. Rebalances are held while
// a batch is in flight (BlockRebalanceOnPoll) and allowed again once the
// batch's offsets are committed to the group, after the sink's commit.

// kafkaPollRecords bounds one poll. kafkaSessionTimeout is how long the
// group waits for a member that died (kill -9) before it rebalances its
// partitions to the next run.
const (
	kafkaPollRecords    = 10000
	kafkaSessionTimeout = 10 * time.Second
)

type kafkaSource struct {
	cl    *kgo.Client
	topic string
	group string
	start map[int32]int64 // the sink's cursor, applied on assignment
	// seeked is closed once start is known. The group join begins when
	// the client is made, before the runner has read the sink's cursor;
	// an assignment that came first would otherwise start at the
	// group's offsets and replay what the sink already holds.
	seeked   chan struct{}
	seekOnce sync.Once
	next     map[int32]int64 // the next offset to read, per partition
	buf      []*kgo.Record
	pending  bool        // records handed out since the last Commit: rebalances are held
	last     *kgo.Record // the record Next returned last
	replay   struct {    // Replayed's cursor, decoded
		cursor string
		next   map[int32]int64
	}
}

func openKafka(ctx context.Context, u *url.URL, opts Options) (*kafkaSource, error) {
	topic := strings.Trim(u.Path, "/")
	group := cmpOr(u.Query().Get("group"), opts.Group)
	if u.Host == "" || topic == "" || strings.Contains(topic, "/") {
		return nil, routes.BadInput("stream source %s: use kafka://broker:9092/topic?group=NAME", routes.Redact(u.String()))
	}
	if group == "" {
		return nil, routes.BadInput("stream source %s: no consumer group: add ?group=NAME", routes.Redact(u.String()))
	}
	s := &kafkaSource{topic: topic, group: group, start: map[int32]int64{}, next: map[int32]int64{}, seeked: make(chan struct{})}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(u.Host, ",")...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(kafkaSessionTimeout),
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AdjustFetchOffsetsFn(s.adjust),
	)
	if err != nil {
		return nil, routes.BadInput("stream source %s: %v", routes.Redact(u.String()), err)
	}
	s.cl = cl
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("kafka %s: %w", routes.Redact(u.String()), err)
	}
	return s, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// adjust starts each assigned partition at the sink's cursor when it
// holds one for it, waiting for Seek to have been called.
func (s *kafkaSource) adjust(ctx context.Context, offs map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	select {
	case <-s.seeked:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for p := range offs[s.topic] {
		if at, ok := s.start[p]; ok {
			offs[s.topic][p] = kgo.NewOffset().At(at)
		}
	}
	return offs, nil
}

func (s *kafkaSource) Seek(_ context.Context, cursor string) error {
	m, err := decodeKafkaCursor(cursor)
	if err != nil {
		return err
	}
	for p, off := range m {
		s.start[p], s.next[p] = off, off
	}
	s.seekDone()
	return nil
}

func (s *kafkaSource) seekDone() { s.seekOnce.Do(func() { close(s.seeked) }) }

func (s *kafkaSource) Next(ctx context.Context) (Event, error) {
	s.seekDone() // no Seek: start from the group's offsets
	for len(s.buf) == 0 {
		// Records a poll returns are kept even when ctx ended meanwhile:
		// the client's position is already past them.
		f := s.cl.PollRecords(ctx, kafkaPollRecords)
		if s.buf = f.Records(); len(s.buf) > 0 {
			break
		}
		s.allowIfIdle()
		if err := ctx.Err(); err != nil {
			return Event{}, err
		}
		if errs := f.Errors(); len(errs) > 0 {
			e := errs[0]
			return Event{}, fmt.Errorf("kafka poll %s[%d]: %w", e.Topic, e.Partition, e.Err)
		}
	}
	r := s.buf[0]
	s.buf[0] = nil
	s.buf = s.buf[1:]
	s.next[r.Partition] = r.Offset + 1
	s.pending, s.last = true, r
	return Parse(r.Value), nil
}

// allowIfIdle lets a rebalance through after a poll that handed out
// nothing while nothing is waiting for a commit.
func (s *kafkaSource) allowIfIdle() {
	if len(s.buf) == 0 && !s.pending {
		s.cl.AllowRebalance()
	}
}

func (s *kafkaSource) Cursor() string { return encodeKafkaCursor(s.next) }

// Replayed: the last record's offset is below cursor's next offset of
// its partition; done once every partition of cursor is read that far.
func (s *kafkaSource) Replayed(cursor string) (replayed, done bool) {
	if cursor != s.replay.cursor {
		m, err := decodeKafkaCursor(cursor)
		if err != nil {
			return false, true
		}
		s.replay.cursor, s.replay.next = cursor, m
	}
	m := s.replay.next
	if s.last != nil {
		if next, ok := m[s.last.Partition]; ok && s.last.Offset < next {
			replayed = true
		}
	}
	for p, next := range m {
		if s.next[p] < next {
			return replayed, false
		}
	}
	return replayed, true
}

// Commit commits the offsets to the group (for lag monitoring and for
// consumers that do not read the sink's cursor), then lets a held
// rebalance through.
func (s *kafkaSource) Commit(ctx context.Context, cursor string) error {
	m, err := decodeKafkaCursor(cursor)
	if err != nil {
		return err
	}
	offs := map[int32]kgo.EpochOffset{}
	for p, off := range m {
		offs[p] = kgo.EpochOffset{Epoch: -1, Offset: off}
	}
	var cerr error
	s.cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{s.topic: offs},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			cerr = err
			if err == nil {
				cerr = commitErr(resp)
			}
		})
	if len(s.buf) == 0 {
		s.pending = false
		s.cl.AllowRebalance()
	}
	if cerr != nil {
		return fmt.Errorf("kafka commit %s: %w", s.topic, cerr)
	}
	return nil
}

// commitErr is the first partition error of a commit response.
func commitErr(resp *kmsg.OffsetCommitResponse) error {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return fmt.Errorf("partition %d: error code %d", p.Partition, p.ErrorCode)
			}
		}
	}
	return nil
}

func (s *kafkaSource) Close() error {
	s.seekDone()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.cl.AllowRebalance()
	err := s.cl.LeaveGroupContext(ctx)
	s.cl.Close()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("kafka leave group: %w", err)
	}
	return nil
}

// encodeKafkaCursor renders partition → next offset as sorted query text.
func encodeKafkaCursor(m map[int32]int64) string {
	q := url.Values{}
	for p, off := range m {
		q.Set(strconv.Itoa(int(p)), strconv.FormatInt(off, 10))
	}
	return q.Encode()
}

func decodeKafkaCursor(s string) (map[int32]int64, error) {
	q, err := url.ParseQuery(s)
	if err != nil {
		return nil, fmt.Errorf("kafka cursor %q: %w", s, err)
	}
	m := map[int32]int64{}
	for k, v := range q {
		p, err1 := strconv.ParseInt(k, 10, 32)
		off, err2 := strconv.ParseInt(v[0], 10, 64)
		if err1 != nil || err2 != nil || off < 0 {
			return nil, fmt.Errorf("kafka cursor %q: want partition=offset pairs", s)
		}
		m[int32(p)] = off
	}
	return m, nil
}

// Drained reports whether every partition of the topic is read to its end
// (from the sink's cursor, else the group's committed offset, else the
// log start). While a rebalance waits for a dead member's session to
// expire, nothing arrives, and this keeps an available_now run waiting
// instead of mistaking the silence for the end.
func (s *kafkaSource) Drained(ctx context.Context) (bool, error) {
	adm := kadm.NewClient(s.cl)
	ends, err := adm.ListEndOffsets(ctx, s.topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return false, fmt.Errorf("kafka end offsets of %s: %w", s.topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, s.topic)
	if err != nil {
		return false, fmt.Errorf("kafka start offsets of %s: %w", s.topic, err)
	}
	committed, err := adm.FetchOffsets(ctx, s.group)
	if err != nil {
		return false, fmt.Errorf("kafka offsets of group %s: %w", s.group, err)
	}
	for p, end := range ends[s.topic] {
		pos, ok := s.next[p]
		if c, found := committed.Lookup(s.topic, p); !ok && found && c.Err == nil && c.At >= 0 {
			pos, ok = c.At, true
		}
		if st, found := starts.Lookup(s.topic, p); !ok && found {
			pos = st.Offset
		}
		if pos < end.Offset {
			return false, nil
		}
	}
	return true, nil
}

// kafkaEnds reads the topic's log start and end offsets and the lag of
// cursor (a partition it does not name counts from the group's committed
// offset, else the log start, as the source would read it) with a client
// that joins no group.
func kafkaEnds(ctx context.Context, u *url.URL, opts Options, cursor string) (Ends, error) {
	topic := strings.Trim(u.Path, "/")
	group := cmpOr(u.Query().Get("group"), opts.Group)
	if u.Host == "" || topic == "" || strings.Contains(topic, "/") {
		return Ends{}, routes.BadInput("stream source %s: use kafka://broker:9092/topic?group=NAME", routes.Redact(u.String()))
	}
	pos, err := decodeKafkaCursor(cursor)
	if err != nil {
		return Ends{}, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(u.Host, ",")...))
	if err != nil {
		return Ends{}, routes.BadInput("stream source %s: %v", routes.Redact(u.String()), err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	fail := func(what string, err error) (Ends, error) {
		return Ends{}, fmt.Errorf("kafka %s: %s of %s: %w", routes.Redact(u.String()), what, topic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fail("end offsets", err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return fail("start offsets", err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) { // no group yet: nothing committed
		return fail("offsets of group "+group, err)
	}
	first, last := map[int32]int64{}, map[int32]int64{}
	e := Ends{Known: true}
	for p, end := range ends[topic] {
		st, _ := starts.Lookup(topic, p)
		first[p], last[p] = st.Offset, end.Offset
		at, ok := pos[p]
		if c, found := committed.Lookup(topic, p); !ok && found && c.Err == nil && c.At >= 0 {
			at, ok = c.At, true
		}
		if !ok {
			at = st.Offset
		}
		e.Behind += max(0, end.Offset-max(at, st.Offset))
	}
	e.Earliest, e.Latest = encodeKafkaCursor(first), encodeKafkaCursor(last)
	return e, nil
}
