"use strict";(self.rspackChunkjupyter_guard=self.rspackChunkjupyter_guard||[]).push([[700],{646(r,e,o){var a=o(601),t=o.n(a),n=o(314),l=(o.n(n))()(t());l.push([r.id,`.jp-GuardStatus {
  cursor: pointer;
  padding: 0 4px;
}

.jp-GuardStatus.jp-mod-warn {
  color: var(--jp-warn-color0);
}

.jp-GuardStatus.jp-mod-paused {
  background: var(--jp-error-color1);
  color: white;
  font-weight: bold;
}

.jp-GuardPanel {
  padding: 8px;
  overflow: auto;
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
  font-size: var(--jp-ui-font-size1);
}

.jp-GuardPanel h2 {
  font-size: var(--jp-ui-font-size2);
  margin: 0 0 8px;
}

.jp-GuardPanel h3 {
  font-size: var(--jp-ui-font-size1);
  margin: 12px 0 4px;
}

.jp-GuardPanel-kernels {
  list-style: none;
  margin: 0;
  padding: 0;
}

.jp-GuardPanel-kernels li {
  padding: 4px;
  border-bottom: 1px solid var(--jp-border-color2);
  cursor: pointer;
}

.jp-GuardPanel-kernels li > div {
  margin: 2px 0;
}

.jp-GuardPanel-kernels li.jp-mod-selected {
  background: var(--jp-layout-color2);
}

.jp-GuardPanel-id {
  font-family: var(--jp-code-font-family);
  color: var(--jp-ui-font-color2);
  margin-left: 8px;
}

.jp-GuardPanel-notebook {
  font-weight: bold;
  margin-right: 8px;
}

.jp-GuardPanel-state {
  font-weight: bold;
}

.jp-GuardPanel-kernels li.jp-mod-paused .jp-GuardPanel-state {
  color: var(--jp-error-color1);
}

.jp-GuardPanel-source {
  color: var(--jp-ui-font-color2);
}

.jp-GuardPanel .jp-GuardPanel-button {
  margin: 2px 4px 0 0;
  min-width: 0;
  padding: 0 8px;
  height: 24px;
  line-height: 24px;
  font-size: var(--jp-ui-font-size1);
}

/* A button that does nothing now must not look like one that does. */
.jp-GuardPanel .jp-GuardPanel-button:disabled {
  opacity: 0.35;
  cursor: not-allowed;
  box-shadow: none;
}

.jp-GuardPanel-cells {
  border-collapse: collapse;
  width: 100%;
  table-layout: fixed;
}

.jp-GuardPanel-cells td {
  padding: 2px 4px;
  border-bottom: 1px solid var(--jp-border-color2);
  white-space: nowrap;
  overflow: hidden;
  text-overflow: ellipsis;
}

/* Wide enough for a whole figure: "+1023 MiB", "running". */
.jp-GuardPanel-cells td.jp-GuardPanel-num {
  width: 5.6em;
  text-align: right;
  text-overflow: clip;
}

.jp-GuardPanel-chart svg {
  display: block;
  background: var(--jp-layout-color0);
  border: 1px solid var(--jp-border-color2);
}

.jp-GuardChart-band {
  fill: var(--jp-layout-color2);
  opacity: 0.6;
}

.jp-GuardChart-start {
  stroke: var(--jp-border-color1);
  stroke-width: 1;
}

.jp-GuardChart-label,
.jp-GuardChart-lineLabel {
  font-size: 10px;
  fill: var(--jp-ui-font-color1);
}

.jp-GuardChart-budget {
  stroke: var(--jp-error-color1);
  stroke-width: 1;
}

.jp-GuardChart-pause {
  stroke: var(--jp-error-color1);
  stroke-dasharray: 4 3;
}

.jp-GuardChart-warn {
  stroke: var(--jp-warn-color1);
  stroke-dasharray: 4 3;
}

text.jp-GuardChart-budget,
text.jp-GuardChart-pause {
  stroke: none;
  fill: var(--jp-error-color1);
}

text.jp-GuardChart-warn {
  stroke: none;
  fill: var(--jp-warn-color1);
}

.jp-GuardChart-kernel {
  fill: none;
  stroke: var(--jp-brand-color1);
  stroke-width: 1.5;
}

.jp-GuardChart-area {
  fill: var(--jp-brand-color1);
  opacity: 0.15;
}

.jp-GuardChart-used {
  fill: none;
  stroke: var(--jp-ui-font-color2);
  stroke-width: 1;
  stroke-dasharray: 2 2;
}

.jp-GuardPanel-code {
  font-family: var(--jp-code-font-family);
}

.jp-GuardPanel-error {
  color: var(--jp-error-color1);
}
`,""]),o.d(e,{},{A:l})},314(r){r.exports=function(r){var e=[];return e.toString=function(){return this.map(function(e){var o="",a=void 0!==e[5];return e[4]&&(o+="@supports (".concat(e[4],") {")),e[2]&&(o+="@media ".concat(e[2]," {")),a&&(o+="@layer".concat(e[5].length>0?" ".concat(e[5]):""," {")),o+=r(e),a&&(o+="}"),e[2]&&(o+="}"),e[4]&&(o+="}"),o}).join("")},e.i=function(r,o,a,t,n){"string"==typeof r&&(r=[[null,r,void 0]]);var l={};if(a)for(var i=0;i<this.length;i++){var p=this[i][0];null!=p&&(l[p]=!0)}for(var d=0;d<r.length;d++){var s=[].concat(r[d]);a&&l[s[0]]||(void 0!==n&&(void 0===s[5]||(s[1]="@layer".concat(s[5].length>0?" ".concat(s[5]):""," {").concat(s[1],"}")),s[5]=n),o&&(s[2]&&(s[1]="@media ".concat(s[2]," {").concat(s[1],"}")),s[2]=o),t&&(s[4]?(s[1]="@supports (".concat(s[4],") {").concat(s[1],"}"),s[4]=t):s[4]="".concat(t)),e.push(s))}},e}},601(r){r.exports=function(r){return r[1]}},72(r){var e=[];function o(r){for(var o=-1,a=0;a<e.length;a++)if(e[a].identifier===r){o=a;break}return o}function a(r,a){for(var t={},n=[],l=0;l<r.length;l++){var i=r[l],p=a.base?i[0]+a.base:i[0],d=t[p]||0,s="".concat(p," ").concat(d);t[p]=d+1;var u=o(s),c={css:i[1],media:i[2],sourceMap:i[3],supports:i[4],layer:i[5]};if(-1!==u)e[u].references++,e[u].updater(c);else{var f=function(r,e){var o=e.domAPI(e);return o.update(r),function(e){e?(e.css!==r.css||e.media!==r.media||e.sourceMap!==r.sourceMap||e.supports!==r.supports||e.layer!==r.layer)&&o.update(r=e):o.remove()}}(c,a);a.byIndex=l,e.splice(l,0,{identifier:s,updater:f,references:1})}n.push(s)}return n}r.exports=function(r,t){var n=a(r=r||[],t=t||{});return function(r){r=r||[];for(var l=0;l<n.length;l++){var i=o(n[l]);e[i].references--}for(var p=a(r,t),d=0;d<n.length;d++){var s=o(n[d]);0===e[s].references&&(e[s].updater(),e.splice(s,1))}n=p}}},659(r){var e={};r.exports=function(r,o){var a=function(r){if(void 0===e[r]){var o=document.querySelector(r);if(window.HTMLIFrameElement&&o instanceof window.HTMLIFrameElement)try{o=o.contentDocument.head}catch(r){o=null}e[r]=o}return e[r]}(r);if(!a)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");a.appendChild(o)}},540(r){r.exports=function(r){var e=document.createElement("style");return r.setAttributes(e,r.attributes),r.insert(e,r.options),e}},56(r,e,o){r.exports=function(r){var e=o.nc;e&&r.setAttribute("nonce",e)}},825(r){r.exports=function(r){if("u"<typeof document)return{update:function(){},remove:function(){}};var e=r.insertStyleElement(r);return{update:function(o){var a,t,n;a="",o.supports&&(a+="@supports (".concat(o.supports,") {")),o.media&&(a+="@media ".concat(o.media," {")),(t=void 0!==o.layer)&&(a+="@layer".concat(o.layer.length>0?" ".concat(o.layer):""," {")),a+=o.css,t&&(a+="}"),o.media&&(a+="}"),o.supports&&(a+="}"),(n=o.sourceMap)&&"u">typeof btoa&&(a+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(n))))," */")),r.styleTagTransform(a,e,r.options)},remove:function(){var r;null===(r=e).parentNode||r.parentNode.removeChild(r)}}}},113(r){r.exports=function(r,e){if(e.styleSheet)e.styleSheet.cssText=r;else{for(;e.firstChild;)e.removeChild(e.firstChild);e.appendChild(document.createTextNode(r))}}},959(r,e,o){var a=o(72),t=o.n(a),n=o(825),l=o.n(n),i=o(659),p=o.n(i),d=o(56),s=o.n(d),u=o(540),c=o.n(u),f=o(113),h=o.n(f),j=o(646),v={};v.styleTagTransform=h(),v.setAttributes=s(),v.insert=p().bind(null,"head"),v.domAPI=l(),v.insertStyleElement=c(),t()(j.A,v),j.A&&j.A.locals&&j.A.locals}}]);