// jupyter-guard in JupyterLab 4 and Notebook 7: a status-bar item for the
// notebook in front and a side panel of every guarded kernel.

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IMainMenu } from '@jupyterlab/mainmenu';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IStatusBar } from '@jupyterlab/statusbar';
import { LabIcon } from '@jupyterlab/ui-components';
import { GuardPanel } from './panel';
import { GuardStatus } from './status';

const shield = new LabIcon({
  name: 'jupyter-guard:shield',
  svgstr: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16"><path class="jp-icon3" fill="#616161" d="M12 2 4 5v6c0 5 3.4 9.7 8 11 4.6-1.3 8-6 8-11V5l-8-3zm0 4a2 2 0 1 1 0 4 2 2 0 0 1 0-4zm-3 8h6v2H9v-2z"/></svg>',
});

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-guard:plugin',
  description: 'The guard where users look: memory against the budget and PAUSED in the status bar, a panel of guarded kernels.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [IStatusBar, IMainMenu],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker, statusBar: IStatusBar | null, mainMenu: IMainMenu | null) => {
    const panel = new GuardPanel(tracker, app.serviceManager.sessions);
    panel.title.icon = shield;
    app.shell.add(panel, 'right', { rank: 900 });

    const open = 'jupyter-guard:open-panel';
    app.commands.addCommand(open, {
      label: 'Show Guarded Kernels',
      execute: () => app.shell.activateById(panel.id),
    });
    // Notebook 7 shows no status bar: the Kernel menu is where its users look.
    mainMenu?.kernelMenu.addGroup([{ command: open }], 100);

    if (statusBar) {
      const item = new GuardStatus(tracker, app.serviceManager.kernelspecs, () => void app.commands.execute(open));
      statusBar.registerStatusItem('jupyter-guard:status', {
        item,
        align: 'left',
        rank: 5,
        isActive: () => item.guarded,
        activeStateChanged: item.activeStateChanged,
      });
    }
  },
};

export default plugin;
