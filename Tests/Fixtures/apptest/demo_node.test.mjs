// The demo's Node plugin (projects) tested with switchyard-sdk/testing's AppTest over a real host: every change of the
// tree and every notification a plugin received is asserted. Run by AppTestHelperTests with `node --test`, SWITCHYARD
// (the CLI) and SWITCHYARD_DEMO_MANIFEST set.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppTest, AppTestFailure } from '../../../Protocol/sdk/node/testing.mjs';

const manifest = process.env.SWITCHYARD_DEMO_MANIFEST;

const signedIn = (projects) => `
main.main
  root authenticated {"user":"alice"} -> authenticated.home
    tab todos -> todos.navigation
      child content -> todos.todos
        root list: TodoList {"count":4}
    tab projects (selected) -> projects.projects
      root list: ProjectList {"count":3}${projects}
    tab profile -> profile.profile
      root overview: Profile`;

async function signIn(app) {
  await app.navigate([{ op: 'setRoot', route: 'authenticated', params: { user: 'alice' } }]);
  await app.expectTree(signedIn('').replace('tab todos -> ', 'tab todos (selected) -> ').replace('tab projects (selected) -> ', 'tab projects -> '));
  await app.skipReceived(); // the sign-in's reports: the Python tests assert them
  await app.navigate([{ op: 'selectTab', tab: 'projects' }], 'authenticated.home');
  await app.expectTree(signedIn(''));
  await app.expectReceived('authenticated.home tabSelected projects');
}

test('a project link pushes the project flow; its members action opens the owner in the profile plugin', async (t) => {
  const app = await AppTest.start({ manifest });
  t.after(() => app.close({ check: false }));
  await signIn(app);
  await app.open('switchyard://projects/p1/members');
  const project = `
      push project {"id":"p1"} -> projects.project
        root overview: Project {"id":"p1","name":"Apollo"}`;
  await app.expectTree(signedIn(`${project}
        push members: Members {"project":"p1"}`));
  // The link selects the projects tab, which is selected already: a re-tap.
  await app.expectReceived('authenticated.home tabSelected projects again');
  await app.action('projects.project', 'showOwner');
  await app.expectTree(signedIn(`${project}
        push members: Members {"project":"p1"}
        push owner -> profile.profile
          root overview: Profile`));
  await app.dismiss('projects.projects');
  await app.expectTree(signedIn(''));
  await app.expectReceived(
    'profile.profile dismissed overview (user)',
    'projects.project dismissed owner (user)',
    'projects.project dismissed members (user)',
    'projects.project dismissed overview (user)',
    'projects.projects dismissed project (user)',
    'profile.profile destroyed',
    'projects.project destroyed',
  );
  await app.close();
});

test('an unasserted change fails the next action with a readable diff', async (t) => {
  const app = await AppTest.start({ manifest });
  t.after(() => app.close({ check: false }));
  await app.open('switchyard://about');
  await assert.rejects(app.open('switchyard://forgot'), (error) => {
    assert.ok(error instanceof AppTestFailure && error instanceof assert.AssertionError);
    assert.match(error.message, /^before open switchyard:\/\/forgot, 1 change\(s\) of the tree not asserted/);
    assert.ok(error.message.includes('+  modal about: About {"version":"1.0.0"}'), error.message);
    return true;
  });
});

test('not exhaustive: only what the test asserts', async (t) => {
  const app = await AppTest.start({ manifest, exhaustive: false });
  t.after(() => app.close({ check: false }));
  await app.open('switchyard://about');
  await app.open('switchyard://forgot');
  await app.expectReceived();
  await app.expectTree(`
    main.main
      root unauthenticated -> unauthenticated.unauthenticated
        root login: Login
        modal forgotPassword: ForgotPassword {"email":""}
      modal about: About {"version":"1.0.0"}`);
  await app.close();
});
