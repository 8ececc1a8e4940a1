// `toolctx/helpers` alone inside workerd, answering the helper vectors'
// cases (`{ kind, input }`) with npm/test/helper-answers.mjs, the answers
// the Node runner gives (tests/edge/helpers-vectors.mjs).
import * as api from 'toolctx/helpers';

import { helperAnswer } from '../../../npm/test/helper-answers.mjs';

export default {
  async fetch(request) {
    const { kind, input } = await request.json();
    return Response.json(await helperAnswer(api, kind, input));
  },
};
