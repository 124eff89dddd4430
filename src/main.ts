#!/usr/bin/env node
// First: it sets how V8 collects garbage before any other module runs.
import './heap-policy.ts';
import { startFromCommandLine } from './cli.ts';

const { config, warnings, version } = await startFromCommandLine(process.argv.slice(2));
// Loaded only to serve: --help, --version and --check-config answer without loading the server's dependencies.
const { buildApp } = await import('./http/build-app.ts');
const { describeStartup } = await import('./config/startup-summary.ts');
const { listenFailure } = await import('./http/listen-failure.ts');
const app = await buildApp({ config });
const { routeConsoleToLog } = await import('./observability/console-to-log.ts');
routeConsoleToLog(app.log);
for (const warning of warnings) app.log.warn({ source: warning.source }, `configuration: ${warning.message}`);

let draining = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    // A repeated SIGTERM (an operator or a supervisor saying it again) leaves the drain to finish; a second Ctrl-C means now.
    if (draining) {
      if (signal === 'SIGINT') {
        app.log.warn({ signal }, 'shutting down: a second SIGINT stops the drain; exiting now (responses still in flight are not stored)');
        process.exit(130);
      }
      app.log.info({ signal }, 'shutting down: already draining; the drain goes on (SIGINT again to stop it)');
      return;
    }
    draining = true;
    app.log.info({ signal, grace_ms: config.server.shutdownGraceMs }, 'shutting down: draining responses in flight');
    // The drain ends every response within the grace (plus a few seconds to store them); a close that still hangs is a bug, not a reason to stay up.
    setTimeout(() => {
      app.log.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.server.shutdownGraceMs + 15_000).unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}

try {
  await app.listen({ host: config.server.host, port: config.server.port });
} catch (error) {
  app.log.fatal({ err: error }, `could not start: ${listenFailure(error, config.server)}`);
  process.exit(1);
}
app.log.info(describeStartup(config, { version, address: app.server.address() }), 'loopgate started');
