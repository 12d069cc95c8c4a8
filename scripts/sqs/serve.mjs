// scripts/sqs/serve.mjs — fauxqs (an SQS server speaking the JSON protocol
// aws-sdk-go-v2 uses) on 127.0.0.1 only: fauxqs's own CLI listens on every
// interface. Port from FAUXQS_PORT. Run by scripts/services.sh.
import { buildApp } from "fauxqs";

const port = parseInt(process.env.FAUXQS_PORT ?? "19324", 10);
const app = buildApp({ logger: false });
await app.listen({ port, host: "127.0.0.1" });
console.log(`fauxqs listening on 127.0.0.1:${port}`);
