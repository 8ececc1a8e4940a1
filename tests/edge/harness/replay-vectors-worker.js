// The helper vectors' replay guard kinds (`replay.*`) inside workerd:
// `redisReplayStore` from the main entry `toolctx`, with the verifier's
// module, answered by npm/test/helper-answers.mjs as in Node. A worker of
// its own, so that the helpers worker keeps shipping the conventions
// module alone.
import { redisReplayStore } from 'toolctx';

import { helperAnswer } from '../../../npm/test/helper-answers.mjs';

export default {
  async fetch(request) {
    const { kind, input } = await request.json();
    return Response.json(await helperAnswer({ redisReplayStore }, kind, input));
  },
};
