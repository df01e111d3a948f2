import { step } from '#shared/bench-floor';
import { auth, defineEndpoint } from '#shared/declaration';
import { authenticationOptions } from '#functions/needs';

export default defineEndpoint({
  routes: [auth('POST', '/login/passkey/options', 'page')],
  needs: { table: authenticationOptions },
  sample: { status: 200, make: (kit) => kit.page('POST /login/passkey/options: a passkey sign-in’s options (a challenge that expires unused)', { form: {} }) },
  bench: { floor: [step.put('challenge')], minReason: 'PutItem(the challenge: 5 minutes, single use)' },
});
