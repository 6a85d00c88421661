import { z } from 'zod';

/*
 * Every schema of ours is built with this `z`. zod compiles a parser (`new Function`) for each object schema the
 * first time it parses, a JIT that pays off only over many parses of one schema: our processes are mostly short
 * (`caesar run`, `ps`, a task's supervisor) and parse each schema a few times, so compiling cost ~50 ms of every CLI
 * start (issue 14), while parsing 100k events measured the same with and without it. zod reads this setting when a
 * schema is built, which is why it is set here, in the module every schema module imports zod through. It also keeps
 * zod from probing `new Function` at all, which a webview's Content-Security-Policy would report.
 */
z.config({ jitless: true });

export { z };
